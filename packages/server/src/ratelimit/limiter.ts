import { isReplyError, type RedisLink } from '../lib/redis.js';
import { MemoryRateLimitStore } from './memory.js';
import { RedisRateLimitStore } from './redis.js';
import type { Clock, RateLimitDecision, RateLimitStore } from './window.js';

export interface RateLimiterOptions {
  clock: Clock;
  /** With Redis the window is shared by every node; without it, per node. */
  redis?: RedisLink | undefined;
  /** Inject a clock into the Redis script too (tests); by default Redis's own time is used. */
  redisUsesClock?: boolean;
  granularityMs?: number;
}

/**
 * Each request is counted once, by whichever asks first: the credential check or the limiter hook.
 * The decision is kept on the request under this key, which the plugin declares on every request
 * (Fastify's `decorateRequest`), so adding it never changes a request object's shape.
 */
export const COUNTED = Symbol('gatehouse.rateLimitDecision');

/**
 * Chooses the store per request: the shared Redis window while Redis is healthy, otherwise the
 * per-node memory window. A failed Redis call falls back for that very request, so an outage never
 * turns into errors for callers, only into per-node limits until Redis is back.
 */
export class RateLimiter implements RateLimitStore {
  readonly memory: MemoryRateLimitStore;
  private readonly redisStore: RedisRateLimitStore | undefined;
  private readonly link: RedisLink | undefined;

  constructor(options: RateLimiterOptions) {
    const shape = options.granularityMs === undefined ? {} : { granularityMs: options.granularityMs };
    this.memory = new MemoryRateLimitStore({ clock: options.clock, ...shape });
    this.link = options.redis;
    if (options.redis) {
      this.redisStore = new RedisRateLimitStore({
        redis: options.redis.command,
        prefix: options.redis.prefix,
        ...(options.redisUsesClock ? { clock: options.clock } : {}),
        ...shape,
      });
    }
  }

  /**
   * Counts `request` against `key`, once: a second call for the same request returns the first
   * decision. The session check of `/v1/me*` counts the request early to read the environment's
   * change number in the same round trip (app.ts); the limiter hook then applies that decision.
   */
  hitOnce(request: object, key: string, limit: number): RateLimitDecision | Promise<RateLimitDecision> {
    // Kept on the request itself (a WeakMap cost about 1 % of a cached request's CPU).
    const counted = request as { [COUNTED]?: RateLimitDecision | Promise<RateLimitDecision> | null };
    return (counted[COUNTED] ??= this.hit(key, limit));
  }

  hit(key: string, limit: number): RateLimitDecision | Promise<RateLimitDecision> {
    const link = this.link;
    if (!this.redisStore || !link || link.state !== 'ok') return this.memory.hit(key, limit);
    return this.redisStore.hit(key, limit).catch((error: unknown) => {
      // A reply error means Redis is up but refused this call; anything else means it is away.
      if (!isReplyError(error)) link.reportFailure(error);
      return this.memory.hit(key, limit);
    });
  }
}
