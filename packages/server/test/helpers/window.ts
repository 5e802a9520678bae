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
 * - a refusal is justified: `limit` admitted requests were still held, a request being held until
 *   60 s after the last admission of its bucket (so capacity comes back at most one bucket late);
 * - after a refusal, nothing is admitted before the announced `freeAtMs`, the first request at or
 *   after it is admitted, and it is never more than 60 s away (a 60 s window never needs longer).
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
      expect(d.remaining).toBe(options.limit - held(admitted, t, options.granularityMs));
    } else {
      refused++;
      const holding = held(admitted, t, options.granularityMs);
      expect(holding, `refused at ${t - T0} ms with ${holding} held`).toBeGreaterThanOrEqual(options.limit);
      expect(d.remaining).toBe(0);
      expect(d.freeAtMs).toBeGreaterThan(t);
      expect(d.freeAtMs - t, `refused at ${t - T0} ms`).toBeLessThanOrEqual(60_000);
      promisedFreeAt ??= d.freeAtMs;
      expect(d.freeAtMs).toBe(promisedFreeAt);
    }
  }
  return { admitted: admitted.length, refused };
}

/** Admitted requests still held at `t`: those whose bucket's last admission is less than 60 s old. */
function held(admitted: number[], t: number, g: number): number {
  const last = new Map<number, number>();
  for (const a of admitted) last.set(Math.floor(a / g), Math.max(a, last.get(Math.floor(a / g)) ?? a));
  return admitted.filter((a) => last.get(Math.floor(a / g))! + 60_000 > t).length;
}
