// When a failed webhook delivery is tried again (Standard Webhooks' schedule, with jitter).

/** Delays before each retry, after the 1st, 2nd … 9th failed attempt; after the 10th the message has failed. */
export const RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
] as const;

export const JITTER = 0.2;

/**
 * The delay before the retry that follows failed attempt `attempt` (1-based), with up to ±20 %
 * jitter so that a receiver coming back is not hit by every queued message at once; a Retry-After
 * longer than that is honoured (capped at the schedule's longest step). Undefined: no retry left.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random: () => number = Math.random): number | undefined {
  const base = RETRY_SCHEDULE_MS[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, RETRY_SCHEDULE_MS.at(-1)!));
}
