import type { Redis, Result } from 'ioredis';
import type { Clock } from './window.js';
import type { AttemptOutcome, ThrottleCheck, ThrottleStore } from './throttle-store.js';

/**
 * One attempt against several subjects, atomically: if any subject is locked, nothing is counted and
 * the reply says how long the longest lock still needs; otherwise every subject's count grows by
 * one and a subject past its allowance is locked. One hash per subject: `f` the count, `u` the
 * end of its lock (ms). The time is Redis's own unless the caller passes one (tests).
 *
 * ARGV: now ('' for Redis's clock), then per key: free, baseLockMs, maxLockMs, windowMs.
 * Reply: {1, now, count…} when admitted, {0, now, waitMs} when locked.
 */
export const THROTTLE_ATTEMPT_LUA = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local wait = 0
for i = 1, #KEYS do
  local u = tonumber(redis.call('HGET', KEYS[i], 'u') or '0')
  if u - now > wait then wait = u - now end
end
if wait > 0 then return {0, now, wait} end
local reply = {1, now}
for i = 1, #KEYS do
  local a = 2 + (i - 1) * 4
  local free, base, max, window = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local f = redis.call('HINCRBY', KEYS[i], 'f', 1)
  if base > 0 and f >= free then
    local lock = math.min(max, base * 2 ^ math.min(f - free, 30))
    redis.call('HSET', KEYS[i], 'u', string.format('%d', now + lock))
  end
  redis.call('PEXPIRE', KEYS[i], window)
  reply[#reply + 1] = f
end
return reply
`;

/**
 * Gives an attempt back. ARGV per key: mode ('clear' or 'undo'), free. Undoing below the allowance
 * also lifts a lock that the given-back attempt set.
 */
export const THROTTLE_SETTLE_LUA = `
for i = 1, #KEYS do
  local mode, free = ARGV[(i - 1) * 2 + 1], tonumber(ARGV[(i - 1) * 2 + 2])
  if mode == 'clear' then
    redis.call('DEL', KEYS[i])
  else
    local f = redis.call('HINCRBY', KEYS[i], 'f', -1)
    if f <= 0 then
      redis.call('DEL', KEYS[i])
    elseif f < free then
      redis.call('HDEL', KEYS[i], 'u')
    end
  end
end
return 1
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    gatehouseThrottleAttempt(numberOfKeys: number, ...args: (string | number)[]): Result<number[], Context>;
    gatehouseThrottleSettle(numberOfKeys: number, ...args: (string | number)[]): Result<number, Context>;
  }
}

export class RedisThrottleStore implements ThrottleStore {
  constructor(
    private readonly redis: Redis,
    /** Injected time (tests); by default Redis's clock, one timeline for every node. */
    private readonly clock?: Clock,
  ) {
    // ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT (e.g. after a Redis restart).
    const r = redis as Partial<Pick<Redis, 'gatehouseThrottleAttempt'>>;
    if (typeof r.gatehouseThrottleAttempt !== 'function') {
      redis.defineCommand('gatehouseThrottleAttempt', { lua: THROTTLE_ATTEMPT_LUA });
      redis.defineCommand('gatehouseThrottleSettle', { lua: THROTTLE_SETTLE_LUA });
    }
  }

  async attempt(checks: readonly ThrottleCheck[]): Promise<AttemptOutcome> {
    const now = this.clock ? String(Math.floor(this.clock())) : '';
    const args: (string | number)[] = [...checks.map((c) => c.key), now];
    for (const { policy } of checks) args.push(policy.free, policy.baseLockMs, policy.maxLockMs, policy.windowMs);
    const reply = await this.redis.gatehouseThrottleAttempt(checks.length, ...args);
    const [admitted, nowMs, ...rest] = reply.map(Number) as [number, number, ...number[]];
    if (admitted !== 1) return { admitted: false, waitMs: rest[0] ?? 0, nowMs };
    return { admitted: true, counts: rest, nowMs };
  }

  async settle(checks: readonly ThrottleCheck[]): Promise<void> {
    const args: (string | number)[] = checks.map((c) => c.key);
    for (const { policy } of checks) args.push(policy.onSuccess, policy.free);
    await this.redis.gatehouseThrottleSettle(checks.length, ...args);
  }
}
