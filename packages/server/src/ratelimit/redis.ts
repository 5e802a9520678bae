import type { Redis, Result } from 'ioredis';
import { changeSequenceKey } from '../lib/redis.js';
import { DEFAULT_GRANULARITY_MS, slotCount, WINDOW_MS, type Clock, type RateLimitDecision, type RateLimitStore } from './window.js';

/**
 * The same ring as the memory store, kept in one Redis string per environment and updated by one
 * Lua script, so every node sees one window and a request is counted atomically.
 *
 * It also returns the environment's change number (KEYS[2], same hash slot), so a `/v1/me*`
 * request learns it without a round trip of its own.
 *
 * Layout (BITFIELD bit offsets): head i64 @0, lo i64 @64, total u32 @128, then one u32 count per
 * slot from bit 160, then one u16 per slot: the offset in its bucket of the bucket's last admission.
 * A ring of 601 slots is 3.6 KB per active environment, whatever the limit.
 *
 * The time is Redis's own (TIME) unless a clock is injected, so nodes with skewed clocks still
 * share one timeline. A time earlier than the ring's head is treated as the head, so the window
 * never reopens buckets it has already counted.
 */
export const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local g = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local want = tonumber(ARGV[5]) or 1
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function off(x) return 160 + 32 * (x % n) end
local function loff(x) return 160 + 32 * n + 16 * (x % n) end
local window = (n - 1) * g

local b = math.floor(now / g)
local m = redis.call('BITFIELD', key, 'GET', 'i64', 0, 'GET', 'i64', 64, 'GET', 'u32', 128)
local head, lo, total = m[1], m[2], m[3]
local old_lo = lo
local moved = b > head

if b < head then
  b = head
elseif b > head then
  if b - head >= n then
    redis.call('DEL', key)
    total = 0
    lo = b
  else
    local leaving = b - n
    local from = math.max(lo, head - n + 1)
    if from <= leaving then
      local args = {}
      for x = from, leaving do
        args[#args + 1] = 'SET'; args[#args + 1] = 'u32'; args[#args + 1] = off(x); args[#args + 1] = 0
      end
      local old = redis.call('BITFIELD', key, unpack(args))
      for i = 1, #old do total = total - old[i] end
    end
    if lo <= leaving then lo = leaving + 1 end
  end
  head = b
end

-- The oldest bucket leaves within this one, once the window has passed its last admission.
local offset = now - b * g
if offset < 0 then offset = 0 end
local oldest = b - n + 1
local e = redis.call('BITFIELD', key, 'GET', 'u32', off(oldest), 'GET', 'u16', loff(oldest), 'GET', 'u32', off(b), 'GET', 'u16', loff(b))
local expired = oldest >= lo and e[1] > 0 and offset >= e[2]
if expired then
  total = total - e[1]
  lo = oldest + 1
end
local latest_b = offset
if e[3] > 0 and e[4] > offset then latest_b = e[4] end

-- Admits as many of the \`want\` requests as the window has room for, in arrival order.
local allowed = 0
if total < limit then
  allowed = math.min(want, limit - total)
  total = total + allowed
end
local remaining = limit - total
if remaining < 0 then remaining = 0 end

local free_at = now
if remaining == 0 then
  local need = total - limit + 1
  local freed = 0
  free_at = (b + n) * g
  local x = math.max(lo, b - n + 1)
  local done = false
  while x <= b and not done do
    local last = math.min(x + 63, b)
    local args = {}
    for y = x, last do
      args[#args + 1] = 'GET'; args[#args + 1] = 'u32'; args[#args + 1] = off(y)
    end
    local counts = redis.call('BITFIELD', key, unpack(args))
    for i = 1, #counts do
      local c = counts[i]
      -- This request's own count is written below, with the rest.
      if x + i - 1 == b then c = c + allowed end
      if c > 0 then
        if freed == 0 then lo = x + i - 1 end
        freed = freed + c
        if freed >= need then
          local y = x + i - 1
          local latest = latest_b
          if y ~= b or allowed == 0 then latest = redis.call('BITFIELD', key, 'GET', 'u16', loff(y))[1] end
          free_at = y * g + latest + window
          done = true
          break
        end
      end
    end
    x = last + 1
  end
end

-- One write for the request and the header; an unchanged field is not rewritten.
local w = {}
if allowed > 0 then
  w[#w + 1] = 'INCRBY'; w[#w + 1] = 'u32'; w[#w + 1] = off(b); w[#w + 1] = allowed
  w[#w + 1] = 'SET'; w[#w + 1] = 'u16'; w[#w + 1] = loff(b); w[#w + 1] = latest_b
end
if expired then
  w[#w + 1] = 'SET'; w[#w + 1] = 'u32'; w[#w + 1] = off(oldest); w[#w + 1] = 0
end
if allowed > 0 or moved or expired then
  w[#w + 1] = 'SET'; w[#w + 1] = 'u32'; w[#w + 1] = 128; w[#w + 1] = total
end
if moved then
  w[#w + 1] = 'SET'; w[#w + 1] = 'i64'; w[#w + 1] = 0; w[#w + 1] = head
end
if lo ~= old_lo then
  w[#w + 1] = 'SET'; w[#w + 1] = 'i64'; w[#w + 1] = 64; w[#w + 1] = lo
end
if #w > 0 then redis.call('BITFIELD', key, unpack(w)) end
-- Nothing in the ring matters once its newest bucket has left the window.
if moved then redis.call('PEXPIRE', key, n * g + 1000) end
-- The environment's change number rides along, for the caches of /v1/me* (lib/redis.ts).
return {allowed, remaining, free_at, now, tonumber(redis.call('GET', KEYS[2]) or '0')}
`;

type ScriptReply = [admitted: number, remaining: number, freeAtMs: number, nowMs: number, changeSequence: number];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    gatehouseSlidingWindow(
      key: string,
      sequenceKey: string,
      limit: number,
      granularityMs: number,
      slots: number,
      now: string,
      want: number,
    ): Result<ScriptReply, Context>;
  }
}

export interface RedisStoreOptions {
  redis: Redis;
  /** Key prefix, e.g. "gh:". Each environment's key is `${prefix}rl:{${environmentId}}`. */
  prefix: string;
  /** Injected time for tests; by default the script reads Redis's clock. */
  clock?: Clock;
  windowMs?: number;
  granularityMs?: number;
}

/** The `{…}` hash tag puts everything of one environment in one Redis Cluster slot. */
export function rateLimitKey(prefix: string, environmentId: string): string {
  return `${prefix}rl:{${environmentId}}`;
}

export function defineSlidingWindow(redis: Redis): void {
  // ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT (e.g. after a Redis restart).
  if (typeof (redis as Partial<Pick<Redis, 'gatehouseSlidingWindow'>>).gatehouseSlidingWindow !== 'function') {
    redis.defineCommand('gatehouseSlidingWindow', { numberOfKeys: 2, lua: SLIDING_WINDOW_LUA });
  }
}

interface Waiter {
  resolve: (decision: RateLimitDecision) => void;
  reject: (error: unknown) => void;
}

/**
 * Requests of one environment that arrive in the same turn of the event loop are counted by one
 * script call that admits up to as many of them as the window has room for, in arrival order. The
 * script stays the only writer of the window, so the count is as exact as one call per request,
 * across every node; what it saves is a round trip and a script run per request under load.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly clock: Clock | undefined;
  private readonly granularityMs: number;
  private readonly slots: number;
  /** Requests waiting for this turn's call, per environment and limit. */
  private pending = new Map<string, { key: string; limit: number; waiters: Waiter[] }>();
  private flushScheduled = false;

  constructor(options: RedisStoreOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.clock = options.clock;
    this.granularityMs = options.granularityMs ?? DEFAULT_GRANULARITY_MS;
    this.slots = slotCount({ windowMs: options.windowMs ?? WINDOW_MS, granularityMs: this.granularityMs });
    defineSlidingWindow(this.redis);
  }

  hit(key: string, limit: number): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      const group = `${limit}:${key}`;
      let batch = this.pending.get(group);
      if (!batch) {
        batch = { key, limit, waiters: [] };
        this.pending.set(group, batch);
      }
      batch.waiters.push({ resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // After every request read in this turn of the event loop has been parsed (the check phase).
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batches = this.pending;
    this.pending = new Map();
    this.flushScheduled = false;
    for (const { key, limit, waiters } of batches.values()) void this.count(key, limit, waiters);
  }

  private async count(key: string, limit: number, waiters: Waiter[]): Promise<void> {
    let reply: ScriptReply;
    try {
      const now = this.clock ? String(Math.floor(this.clock())) : '';
      reply = await this.redis.gatehouseSlidingWindow(
        rateLimitKey(this.prefix, key),
        changeSequenceKey(this.prefix, key),
        limit,
        this.granularityMs,
        this.slots,
        now,
        waiters.length,
      );
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    const [admitted, remaining, freeAtMs, nowMs, changeSequence] = reply;
    waiters.forEach((waiter, i) => {
      const allowed = i < admitted;
      // The admitted ones as if counted one by one: the first saw the most room left.
      const left = allowed ? remaining + (admitted - 1 - i) : 0;
      waiter.resolve({ allowed, limit, remaining: left, freeAtMs: left > 0 ? nowMs : freeAtMs, nowMs, changeSequence });
    });
  }
}
