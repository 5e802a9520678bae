import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';

const MINUTE = 60_000;
const SLOTS = 60;
/** How often a node adds its counts to Redis: the chart is per minute, a few seconds late is fine. */
const FLUSH_MS = 5_000;

export interface SharedRate {
  redis: Redis;
  prefix: string;
  log: { warn: (object: object, message: string) => void };
}

/**
 * Requests per minute over the last hour, per environment: the console's chart of recent traffic.
 * Each node counts in its memory (sixty slots per environment, reused as the minutes pass). With
 * Redis, the nodes' counts are added up there: each node adds what it counted every few seconds
 * (one INCRBY per environment and minute, never a round trip per request) to a key per environment
 * and minute that expires after the hour, and the chart reads the sum. Without Redis, or while it
 * is away, the chart shows this node's own counts.
 */
export class RequestRate {
  private readonly slots = new Map<string, { minute: number[]; count: number[] }>();
  /** Counted here and not yet added to Redis: environment → minute → requests. */
  private pending = new Map<string, Map<number, number>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly now: () => number,
    private readonly shared?: SharedRate,
  ) {}

  private key(environmentId: string, minute: number): string {
    // The braces keep an environment's minutes in one cluster slot, so one MGET reads them.
    return `${this.shared!.prefix}rate:{${environmentId}}:${minute}`;
  }

  hit(environmentId: string): void {
    const minute = Math.floor(this.now() / MINUTE);
    let ring = this.slots.get(environmentId);
    if (!ring) {
      ring = { minute: new Array<number>(SLOTS).fill(-1), count: new Array<number>(SLOTS).fill(0) };
      this.slots.set(environmentId, ring);
    }
    const i = minute % SLOTS;
    if (ring.minute[i] !== minute) {
      ring.minute[i] = minute;
      ring.count[i] = 0;
    }
    ring.count[i]! += 1;
    if (this.shared) {
      let minutes = this.pending.get(environmentId);
      if (!minutes) this.pending.set(environmentId, (minutes = new Map()));
      minutes.set(minute, (minutes.get(minute) ?? 0) + 1);
      if (!this.timer) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          void this.flush();
        }, FLUSH_MS);
        this.timer.unref();
      }
    }
  }

  /** Adds this node's unsent counts to Redis; counts that cannot be sent are dropped (the chart is a guide). */
  async flush(): Promise<void> {
    if (!this.shared || this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const pipeline = this.shared.redis.pipeline();
    for (const [environmentId, minutes] of batch) {
      for (const [minute, count] of minutes) {
        const key = this.key(environmentId, minute);
        pipeline.incrby(key, count);
        // Kept a little over the hour the chart shows, then gone by itself.
        pipeline.pexpire(key, (SLOTS + 5) * MINUTE);
      }
    }
    try {
      await pipeline.exec();
    } catch (error) {
      this.shared.log.warn({ err: error }, 'could not add request counts to Redis');
    }
  }

  /** The last 60 minutes, oldest first, the current minute last. */
  async lastHour(environmentId: string): Promise<{ minute: number; requests: number }[]> {
    const current = Math.floor(this.now() / MINUTE);
    const minutes = Array.from({ length: SLOTS }, (_, k) => current - SLOTS + 1 + k);
    if (this.shared) {
      try {
        await this.flush();
        const values = await this.shared.redis.mget(minutes.map((m) => this.key(environmentId, m)));
        return minutes.map((m, k) => ({ minute: m * MINUTE, requests: Number(values[k] ?? 0) }));
      } catch (error) {
        this.shared.log.warn({ err: error }, 'could not read request counts from Redis; showing this node\'s');
      }
    }
    const ring = this.slots.get(environmentId);
    return minutes.map((m) => {
      const i = m % SLOTS;
      return { minute: m * MINUTE, requests: ring && ring.minute[i] === m ? ring.count[i]! : 0 };
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

/** Counts every answered request authenticated to an environment (PK, SK or access token). */
export const requestRatePlugin = fp<{ rate: RequestRate }>(
  async (app: FastifyInstance, { rate }) => {
    // A callback, not an async function: no promise per request on every route.
    app.addHook('onResponse', (request, _reply, done) => {
      const auth = request.auth;
      if (auth && auth.kind !== 'platform') rate.hit(auth.environment.id);
      done();
    });
    app.addHook('onClose', () => rate.close());
  },
  { name: 'gatehouse-request-rate' },
);
