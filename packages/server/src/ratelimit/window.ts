/**
 * The sliding window shared by both stores (docs/rate-limits.md).
 *
 * Time is cut into buckets of `granularityMs`. A window is a ring of `slots = windowMs /
 * granularityMs + 1` counters, each with the time of its bucket's last admission. A bucket stays
 * in the window until `windowMs` after its last admission, so every request counts for at least
 * `windowMs` (no interval of 60 s ever admits more than the limit) and at most one bucket longer,
 * and a slot is never promised back more than `windowMs` after now: `Retry-After` is at most 60.
 */

export const WINDOW_MS = 60_000;
export const DEFAULT_GRANULARITY_MS = 100;

/** Clock in milliseconds since the epoch. Injected everywhere so tests control time. */
export type Clock = () => number;

export interface WindowShape {
  windowMs: number;
  granularityMs: number;
}

export function slotCount({ windowMs, granularityMs }: WindowShape): number {
  if (!Number.isInteger(granularityMs) || granularityMs <= 0 || windowMs % granularityMs !== 0) {
    throw new Error(`Rate-limit granularity ${granularityMs} ms must divide the ${windowMs} ms window.`);
  }
  return windowMs / granularityMs + 1;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests still free after this one. */
  remaining: number;
  /** Epoch ms at which a request is next free; `nowMs` when one is free already. */
  freeAtMs: number;
  nowMs: number;
  /** The environment's change number, read with the count (Redis store only; see lib/redis.ts). */
  changeSequence?: number;
}

export interface RateLimitStore {
  /** Counts one request against `key` if the window has room for it. */
  hit(key: string, limit: number): RateLimitDecision | Promise<RateLimitDecision>;
}

/** `Retry-After` seconds for a refused request: never 0, never early. */
export function retryAfterSeconds(decision: RateLimitDecision): number {
  return Math.max(1, Math.ceil((decision.freeAtMs - decision.nowMs) / 1000));
}

/** `X-RateLimit-Reset`: the Unix second at which a request is next free, rounded up. */
export function resetSeconds(decision: RateLimitDecision): number {
  return Math.ceil(decision.freeAtMs / 1000);
}
