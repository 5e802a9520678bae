import { isIPv4, isIPv6 } from 'node:net';
import { ApiError } from '../lib/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import { isReplyError, type RedisLink } from '../lib/redis.js';
import type { ThrottlePolicy } from './throttle-policies.js';
import { RedisThrottleStore } from './throttle-redis.js';
import { MemoryThrottleStore, type ThrottleCheck, type ThrottleStore } from './throttle-store.js';
import type { Clock } from './window.js';

/**
 * Sign-in throttling (docs/rate-limits.md, "Sign-in throttling"): counts credential attempts per
 * account and per client address and refuses them with `429 rate_limited` while a lock runs.
 *
 * Like the request limiter, the counts live in Redis when it is configured and healthy, so every
 * node sees one record per subject, and in the node's memory otherwise. A Redis failure falls back
 * to memory for that very attempt: sign-in keeps working and stays throttled, per node, while Redis
 * is away.
 */
export interface SignInThrottleOptions {
  clock: Clock;
  redis?: RedisLink | undefined;
  /** Inject the clock into the Redis script too (tests); by default Redis's own time is used. */
  redisUsesClock?: boolean;
}

export interface ThrottleSubject {
  policy: ThrottlePolicy;
  /**
   * An account's email key (`emailKey` in identity/email.ts: the address compared case-insensitively,
   * the same key the users table matches on, whether or not an account has it) or a client address
   * (see clientSubject).
   */
  subject: string;
}

/**
 * The client address a counter is kept for. An IPv6 client is counted by its /64, the block one
 * subscriber usually gets, since changing address inside it costs nothing.
 */
export function clientSubject(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export class ThrottleTicket {
  private settled = false;
  constructor(
    private readonly store: ThrottleStore,
    private readonly checks: readonly ThrottleCheck[],
    private readonly counts: readonly number[],
    private readonly onStoreFailure: (error: unknown) => void,
  ) {}

  /** The policy's count including this attempt. */
  count(policy: ThrottlePolicy): number {
    const i = this.checks.findIndex((c) => c.policy === policy);
    return i < 0 ? 0 : (this.counts[i] ?? 0);
  }

  /** Gives the attempt back: it was not a credential failure. */
  async settle(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    try {
      await this.store.settle(this.checks);
    } catch (error) {
      // The attempt stays counted: a later sign-in may wait a little longer, never less.
      this.onStoreFailure(error);
    }
  }
}

export class SignInThrottle {
  readonly memory: MemoryThrottleStore;
  private readonly redisStore: RedisThrottleStore | undefined;
  private readonly link: RedisLink | undefined;
  private readonly prefix: string;

  constructor(options: SignInThrottleOptions) {
    this.memory = new MemoryThrottleStore(options.clock);
    this.link = options.redis;
    this.prefix = options.redis?.prefix ?? '';
    if (options.redis) this.redisStore = new RedisThrottleStore(options.redis.command, options.redisUsesClock ? options.clock : undefined);
  }

  private key(environmentId: string, { policy, subject }: ThrottleSubject): string {
    // Hashed: no addresses in Redis. The {environment} hash tag keeps one attempt's keys in one Cluster slot.
    return `${this.prefix}th:{${environmentId}}:${policy.name}:${sha256Hex(subject).slice(0, 32)}`;
  }

  private reportFailure = (error: unknown): void => {
    if (!isReplyError(error)) this.link?.reportFailure(error);
  };

  /**
   * Counts one attempt for every subject, or refuses it unexamined with `429 rate_limited` (message
   * from `refusal`, `Retry-After` the seconds until every lock involved has run out).
   */
  async attempt(
    environmentId: string,
    subjects: readonly ThrottleSubject[],
    refusal: (seconds: number) => string,
  ): Promise<ThrottleTicket> {
    const checks = subjects.map((s) => ({ policy: s.policy, key: this.key(environmentId, s) }));
    let store: ThrottleStore = this.memory;
    let outcome = undefined;
    if (this.redisStore && this.link?.state === 'ok') {
      try {
        outcome = await this.redisStore.attempt(checks);
        store = this.redisStore;
      } catch (error) {
        this.reportFailure(error);
      }
    }
    outcome ??= await this.memory.attempt(checks);
    if (!outcome.admitted) {
      const seconds = Math.max(1, Math.ceil(outcome.waitMs / 1000));
      throw new ApiError('rate_limited', refusal(seconds), undefined, { 'retry-after': String(seconds) });
    }
    return new ThrottleTicket(store, checks, outcome.counts, this.reportFailure);
  }

  /** Forgets a subject's record, e.g. the password failures of an account whose password was just reset. */
  async forget(environmentId: string, subject: ThrottleSubject): Promise<void> {
    const check = { policy: { ...subject.policy, onSuccess: 'clear' as const }, key: this.key(environmentId, subject) };
    this.memory.settle([check]);
    if (this.redisStore && this.link?.state === 'ok') await this.redisStore.settle([check]).catch(this.reportFailure);
  }

  /**
   * Runs `work` as one counted attempt. A credential failure (`invalid_credentials`) stays counted;
   * any other outcome, success or not, gives the attempt back.
   */
  async guard<T>(
    environmentId: string,
    subjects: readonly ThrottleSubject[],
    refusal: (seconds: number) => string,
    work: (ticket: ThrottleTicket) => Promise<T>,
  ): Promise<T> {
    const ticket = await this.attempt(environmentId, subjects, refusal);
    let result: T;
    try {
      result = await work(ticket);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'invalid_credentials')) await ticket.settle();
      throw error;
    }
    await ticket.settle();
    return result;
  }
}
