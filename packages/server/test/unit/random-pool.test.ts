import { describe, expect, it } from 'vitest';
import { randomPart, randomText } from '../../src/lib/crypto.js';

describe('the pooled CSPRNG bytes (ids, refresh secrets, challenges)', () => {
  it('hands each byte out once: draws across many pool refills never repeat, and a draw is its own copy', () => {
    const seen = new Set<string>();
    const draws: Buffer[] = [];
    // 3,000 × 16 bytes: a dozen pools of 4 KiB.
    for (let i = 0; i < 3_000; i++) {
      const part = randomPart(16);
      expect(part.length).toBe(16);
      seen.add(part.toString('hex'));
      draws.push(part);
    }
    expect(seen.size).toBe(3_000);
    const copy = Buffer.from(draws[0]!);
    draws[1]!.fill(0);
    expect(draws[0]!.equals(copy)).toBe(true);
  });

  it('is not all zeros (the pool is wiped behind each draw, never before it), and large sizes bypass it', () => {
    const zeros = Array.from({ length: 500 }, () => randomPart(8)).filter((part) => part.every((byte) => byte === 0));
    expect(zeros).toEqual([]);
    expect(randomPart(1_000).length).toBe(1_000);
    expect(randomText(32)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
