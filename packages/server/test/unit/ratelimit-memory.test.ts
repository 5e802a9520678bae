import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory.js';
import { resetSeconds, retryAfterSeconds } from '../../src/ratelimit/window.js';
import { simulate, T0 } from '../helpers/window.js';

function store(granularityMs = 100) {
  let now = T0;
  const s = new MemoryRateLimitStore({ clock: () => now, granularityMs });
  return {
    s,
    at(t: number, key = 'env_a', limit = 3) {
      now = T0 + t;
      return s.hit(key, limit);
    },
  };
}

describe('memory sliding window', () => {
  it.each([
    [100, 7, 1],
    [100, 50, 2],
    [1000, 20, 3],
    [250, 1, 4],
  ])('never admits more than the limit in any trailing 60 s, and refuses only when full (g=%i ms, limit %i)', async (g, limit, seed) => {
    let now = 0;
    const s = new MemoryRateLimitStore({ clock: () => now, granularityMs: g });
    const { admitted, refused } = await simulate({
      limit,
      granularityMs: g,
      durationMs: 10 * 60_000,
      seed,
      hit: (t) => {
        now = t;
        return s.hit('env_sim', limit);
      },
    });
    // The simulation must exercise both outcomes to prove anything.
    expect(admitted).toBeGreaterThan(limit);
    expect(refused).toBeGreaterThan(0);
  });

  it('gives a slot back exactly when its bucket leaves the window, and says when', () => {
    const { at } = store();
    expect(at(0)).toMatchObject({ allowed: true, remaining: 2, freeAtMs: T0 });
    expect(at(10_050)).toMatchObject({ allowed: true, remaining: 1 });
    const last = at(20_000);
    // Full now: the request at 0 ms, the last of its bucket, frees 60 s after it.
    expect(last).toMatchObject({ allowed: true, remaining: 0, freeAtMs: T0 + 60_000 });
    expect(resetSeconds(last)).toBe(Math.ceil((T0 + 60_000) / 1000));
    const refused = at(30_000);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, freeAtMs: T0 + 60_000 });
    expect(retryAfterSeconds(refused)).toBe(30);
    expect(at(59_999).allowed).toBe(false);
    expect(at(60_000)).toMatchObject({ allowed: true, remaining: 0, freeAtMs: T0 + 70_050 });
    expect(at(70_049).allowed).toBe(false);
    expect(at(70_050).allowed).toBe(true);
  });

  it('never asks a refused client to wait more than 60 s, even for a window filled within one bucket', () => {
    const { at } = store();
    for (const t of [0, 40, 99]) expect(at(t).allowed).toBe(true);
    const refused = at(99);
    expect(refused).toMatchObject({ allowed: false, freeAtMs: T0 + 60_099 });
    expect(retryAfterSeconds(refused)).toBe(60);
    // Every request of the bucket counted for a full 60 s.
    expect(at(60_098).allowed).toBe(false);
    expect(at(60_099).allowed).toBe(true);
  });

  it('does not count refused requests', () => {
    const { at } = store();
    for (let i = 0; i < 3; i++) expect(at(0).allowed).toBe(true);
    for (let i = 0; i < 50; i++) expect(at(30_000).allowed).toBe(false);
    // Had the refusals at 30 s been counted, nothing would be free before 90 s.
    for (let i = 0; i < 3; i++) expect(at(60_000).allowed).toBe(true);
    expect(at(60_000).allowed).toBe(false);
  });

  it('keeps each key in its own window', () => {
    const { at } = store();
    for (let i = 0; i < 3; i++) at(0, 'env_a');
    expect(at(1, 'env_a').allowed).toBe(false);
    expect(at(1, 'env_b')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('does not reopen counted buckets when the clock steps back', () => {
    const { at } = store();
    for (let i = 0; i < 3; i++) at(100_000);
    expect(at(30_000).allowed).toBe(false);
    expect(at(100_000 + 59_000).allowed).toBe(false);
    expect(at(160_100).allowed).toBe(true);
  });

  it('holds a lowered limit until enough old requests have left', () => {
    const { at } = store();
    at(0, 'env_a', 10);
    at(0, 'env_a', 10);
    for (let i = 0; i < 4; i++) at(5_000, 'env_a', 10);
    for (let i = 0; i < 4; i++) at(10_000, 'env_a', 10);
    // 10 held, limit now 4: 7 must leave, which takes the 0 s, 5 s and 10 s buckets.
    const refused = at(20_000, 'env_a', 4);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, freeAtMs: T0 + 70_000 });
    expect(at(65_100, 'env_a', 4).allowed).toBe(false);
    expect(at(69_999, 'env_a', 4).allowed).toBe(false);
    expect(at(70_000, 'env_a', 4)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('forgets keys idle for a whole window', () => {
    const { s, at } = store();
    at(0, 'env_a');
    at(0, 'env_b');
    expect(s.size).toBe(2);
    at(120_000, 'env_c');
    expect(s.size).toBe(1);
  });

  it('refuses a granularity that does not divide the minute', () => {
    expect(() => new MemoryRateLimitStore({ clock: () => 0, granularityMs: 7 })).toThrow(/divide/);
  });
});
