import { afterEach, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/lib/crypto.js';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
/** The 80-bit random part of an id, as a number. */
function randomPart(id: string): bigint {
  let value = 0n;
  for (const char of id.slice(-16)) value = value * 32n + BigInt(CROCKFORD.indexOf(char));
  return value;
}

describe('newId', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is the prefix and 26 Crockford base32 characters', () => {
    expect(newId('org')).toMatch(/^org_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it('sorts ids made in the same millisecond in the order they were made', () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2030, 0, 1));
    const ids = Array.from({ length: 1000 }, () => newId('org'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(4, 14))).size).toBe(1); // one millisecond, one time part
  });

  it('keeps sorting in creation order when the clock steps back', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2031, 0, 1));
    const before = newId('sess');
    now.mockReturnValue(Date.UTC(2031, 0, 1) - 5000);
    const after = newId('sess');
    expect(after > before).toBe(true);
  });

  it('puts the new time in ids of a later millisecond', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2032, 0, 1));
    const first = newId('user');
    now.mockReturnValue(Date.UTC(2032, 0, 1) + 1);
    const second = newId('user');
    expect(second.slice(5, 15)).not.toBe(first.slice(5, 15));
    expect(second > first).toBe(true);
  });

  it('steps by exactly 1 within an environment, whatever other environments create meanwhile', () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2033, 0, 1));
    const first = newId('user', 'env_a');
    for (let i = 0; i < 5; i++) newId('user', 'env_b');
    newId('org', 'env_a');
    const second = newId('user', 'env_a');
    expect(randomPart(second) - randomPart(first)).toBe(1n);
  });
});
