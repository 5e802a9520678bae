import { expect } from 'vitest';
import type { RateLimitDecision } from '../../src/ratelimit/window.js';

export const T0 = 1_800_000_000_000; // a fixed instant, aligned to every bucket size

/** A deterministic PRNG, so a failing simulation can be replayed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SimulationOptions {
  limit: number;
  granularityMs: number;
  durationMs: number;
  seed: number;
  /** Counts one request at time `t` (ms). */
  hit: (t: number) => Promise<RateLimitDecision> | RateLimitDecision;
}

/**
 * Drives bursty traffic through a window and checks, from the outside, the guarantee of
 * docs/rate-limits.md:
 * - no trailing 60 s ever holds more than `limit` admitted requests;
 * - a refusal is justified: the trailing 60 s + one bucket already held `limit` admitted requests
 *   (so capacity comes back as old requests leave, at most one bucket late);
 * - after a refusal, nothing is admitted before the announced `freeAtMs`, and the first request at
 *   or after it is admitted.
 */
export async function simulate(options: SimulationOptions): Promise<{ admitted: number; refused: number }> {
  const random = prng(options.seed);
  const admitted: number[] = [];
  let refused = 0;
  let promisedFreeAt: number | undefined;
  let t = T0;
  while (t < T0 + options.durationMs) {
    // Bursts of same-millisecond requests, quiet gaps, and steady trickles.
    const r = random();
    t += r < 0.2 ? 0 : r < 0.9 ? Math.floor(random() * 400) : Math.floor(random() * 20_000);
    const d = await options.hit(t);
    expect(d.nowMs).toBe(t);
    const windowStart = t - 60_000;
    const recent = admitted.filter((a) => a > windowStart).length;
    if (promisedFreeAt !== undefined) {
      expect(d.allowed, `at ${t - T0} ms, free at ${promisedFreeAt - T0} ms`).toBe(t >= promisedFreeAt);
      if (d.allowed) promisedFreeAt = undefined;
    }
    if (d.allowed) {
      admitted.push(t);
      expect(recent + 1, `admitted at ${t - T0} ms with ${recent} in the trailing 60 s`).toBeLessThanOrEqual(options.limit);
      expect(d.remaining).toBe(options.limit - countSince(admitted, t, options.granularityMs));
    } else {
      refused++;
      const held = countSince(admitted, t, options.granularityMs);
      expect(held, `refused at ${t - T0} ms with ${held} in the trailing 60 s + one bucket`).toBeGreaterThanOrEqual(options.limit);
      expect(d.remaining).toBe(0);
      expect(d.freeAtMs).toBeGreaterThan(t);
      promisedFreeAt ??= d.freeAtMs;
      expect(d.freeAtMs).toBe(promisedFreeAt);
    }
  }
  return { admitted: admitted.length, refused };
}

/** Admitted requests still in the window at `t`: those in buckets ≥ bucket(t) − 60 s / g. */
function countSince(admitted: number[], t: number, g: number): number {
  const firstBucket = Math.floor(t / g) - 60_000 / g;
  return admitted.filter((a) => Math.floor(a / g) >= firstBucket).length;
}
