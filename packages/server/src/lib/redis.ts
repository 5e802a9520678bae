import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis, Result } from 'ioredis';
import { requireLazily } from './lazy.js';
import type { Change } from './change.js';

export type RedisState = 'ok' | 'degraded';

/** Redis answered with an error (a script's refusal, say): Redis itself is reachable. */
export function isReplyError(error: unknown): boolean {
  // By name: ioredis is loaded only when Redis is configured, so its class is not at hand here.
  return error instanceof Error && error.name === 'ReplyError';
}

/**
 * The number of changes announced so far in an environment. The `{env_id}` hash tag puts it in the
 * slot of the environment's rate-limit window, so the limiter's script can read it (Redis Cluster).
 */
export function changeSequenceKey(prefix: string, environmentId: string): string {
  return `${prefix}changes:{${environmentId}}`;
}

/**
 * Announces a message tagged with the environment's change number, atomically: with ARGV[3] = '1'
 * the number is incremented first (a change), otherwise it is the current one (a sync, which changes
 * nothing). ARGV[2] is a JSON object; the number is spliced in as its `seq` field.
 */
const ANNOUNCE_LUA = `
local seq
if ARGV[3] == '1' then
  seq = redis.call('INCR', KEYS[1])
else
  seq = tonumber(redis.call('GET', KEYS[1]) or '0')
end
redis.call('PUBLISH', ARGV[1], string.sub(ARGV[2], 1, -2) .. ',"seq":' .. seq .. '}')
return seq
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    gatehouseAnnounce(key: string, channel: string, message: string, increment: '0' | '1'): Result<number, Context>;
  }
}

/** Environments whose applied change number a node remembers; beyond that it forgets them all and resyncs. */
const MAX_TRACKED_ENVIRONMENTS = 100_000;

/** The environment and change number a relayed message carries; `sync` when it announces no change. */
function sequenceTag(message: string): { environmentId: string; seq: number; sync: boolean } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, environmentId, seq } = value as Record<string, unknown>;
  if (typeof environmentId !== 'string' || typeof seq !== 'number' || !Number.isSafeInteger(seq)) return undefined;
  return { environmentId, seq, sync: kind === 'sync' };
}

export interface RedisLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisLinkOptions {
  url: string;
  /** Prefix of every key and channel, so several deployments (or test runs) can share a Redis. */
  prefix: string;
  log: RedisLog;
  /** A command slower than this counts as Redis being unreachable. */
  commandTimeoutMs?: number;
  /** How often the node sends itself a heartbeat through Redis; three unanswered ones mean it is deaf. */
  heartbeatMs?: number;
}

/**
 * The two connections a node keeps to Redis: one for commands (the limiter, publishing) and one
 * subscribed to the channel of cached-row changes. Commands fail fast while Redis is away (no offline
 * queue), so callers fall back at once instead of piling up; ioredis keeps reconnecting, and the
 * link reports `ok` again once both connections are back and subscribed.
 *
 * A subscriber connection can also go quiet without closing (a half-open TCP connection, a
 * proxy that stopped forwarding). So the node publishes a numbered heartbeat to a channel of its own
 * every `heartbeatMs` and listens for it on the subscriber. `hearing` is true only once a heartbeat
 * published on the current subscription has come back; when Redis has accepted three heartbeats
 * that did not come back, the node is deaf: `hearing` turns false (the caches stop serving) and the
 * subscriber reconnects, at most once per three heartbeats. Counting confirmed publishes
 * rather than time keeps a stalled event loop from looking like deafness. `state` (and with it the
 * shared rate-limit window and /v1/health) follows the command connection and the subscription, so
 * deafness changes it only while the subscriber reconnects.
 *
 * Emits 'state' (RedisState) on every change of state, 'hearing' (boolean) on every change of that,
 * and 'change' (the message text) per change announced by a node.
 *
 * Changes are numbered per environment (`changeSequenceKey`): announcing one increments the number
 * and publishes the change tagged with it, in one script. Per environment, Redis delivers them in
 * that order, so a node that has applied change n of an environment has applied every earlier one
 * announced since it subscribed; what was announced before, it emptied its caches after (they empty
 * whenever `hearing` turns true). `caughtUp` compares that with the number read during a request.
 */
export class RedisLink extends EventEmitter {
  readonly command: Redis;
  readonly subscriber: Redis;
  readonly prefix: string;
  readonly channel: string;
  private readonly log: RedisLog;
  private readonly commandTimeoutMs: number;
  private commandFailed = false;
  private subscribed = false;
  private hears = false;
  /** Whether the last thing logged about the subscriber was that it went deaf. */
  private announcedDeaf = false;
  private readonly heartbeatChannel: string;
  private readonly heartbeatTimer: NodeJS.Timeout;
  /** Number of the last heartbeat sent, of the last one Redis accepted (replied to), of the last one heard. */
  private heartbeatSent = 0;
  private heartbeatConfirmed = 0;
  private heartbeatHeard = 0;
  private current: RedisState = 'degraded';
  private closed = false;
  /** Per environment, the highest change number applied on the current subscription. */
  private readonly applied = new Map<string, number>();
  /** Environments whose number this node asked to be announced: settles once heard (or given up). */
  private readonly syncing = new Map<string, { heard: Promise<void>; done: () => void }>();

  constructor(options: RedisLinkOptions) {
    super();
    this.prefix = options.prefix;
    this.channel = `${options.prefix}changes`;
    this.heartbeatChannel = `${options.prefix}heartbeat:${randomBytes(9).toString('base64url')}`;
    this.log = options.log;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 1000;
    const common = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      autoResubscribe: false,
      commandTimeout: this.commandTimeoutMs,
      retryStrategy: (times: number) => Math.min(100 * times, 1000),
      lazyConnect: true,
    };
    const { Redis: Client } = requireLazily('ioredis') as typeof import('ioredis');
    // Auto-pipelining sends the scripts of concurrent requests in one write.
    this.command = new Client(options.url, { ...common, connectionName: 'gatehouse', enableAutoPipelining: true });
    this.subscriber = new Client(options.url, { ...common, connectionName: 'gatehouse-sub' });
    this.command.defineCommand('gatehouseAnnounce', { numberOfKeys: 1, lua: ANNOUNCE_LUA });

    this.command.on('ready', () => {
      this.commandFailed = false;
      this.update();
      this.heartbeat();
    });
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel, this.heartbeatChannel).then(
        () => {
          this.subscribed = true;
          // Only heartbeats sent from now on can prove this subscription hears.
          this.heartbeatConfirmed = this.heartbeatHeard = this.heartbeatSent;
          this.update();
          this.heartbeat();
        },
        () => undefined,
      );
    });
    for (const connection of [this.command, this.subscriber]) {
      connection.on('close', () => {
        if (connection === this.subscriber) {
          this.subscribed = false;
          this.forgetApplied();
          this.setHearing(false);
        }
        this.update();
      });
      // ioredis logs unhandled 'error' events; the state change is what we report.
      connection.on('error', () => undefined);
    }
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.heardChange(message);
      else if (channel === this.heartbeatChannel) this.heardHeartbeat(Number(message));
    });
    this.heartbeatTimer = setInterval(() => this.heartbeat(), options.heartbeatMs ?? 1000);
    this.heartbeatTimer.unref();
  }

  /** Whether changes announced by other nodes are known to reach this one right now. */
  get hearing(): boolean {
    return this.hears;
  }

  private heardChange(message: string): void {
    const tag = sequenceTag(message);
    // Listeners apply the change synchronously; if one throws, the number is not counted as applied.
    if (!tag?.sync) this.emit('change', message);
    if (!tag || !this.subscribed) return;
    if (this.applied.size >= MAX_TRACKED_ENVIRONMENTS && !this.applied.has(tag.environmentId)) this.forgetApplied();
    // Numbers arrive in the order they were given, so the last heard is the highest applied; one lower
    // than before means Redis lost the number (a flush, an eviction) and counts again from 0.
    this.applied.set(tag.environmentId, tag.seq);
    this.syncing.get(tag.environmentId)?.done();
  }

  private forgetApplied(): void {
    this.applied.clear();
    for (const sync of this.syncing.values()) sync.done();
  }

  /**
   * Whether this node has applied every change of the environment up to `seq`, a number read from
   * Redis during the request (undefined: could not be read). When the node has heard nothing of the
   * environment since it subscribed, it cannot tell: it asks for the current number to be announced
   * (a sync; once for all requests waiting on it) and waits to hear it, at most the command timeout.
   */
  caughtUp(environmentId: string, seq: number | undefined): boolean | Promise<boolean> {
    if (seq === undefined || !this.hears || this.current !== 'ok') return false;
    const applied = this.applied.get(environmentId);
    if (applied !== undefined && seq < applied) {
      // Numbers never go back unless Redis lost them: what was applied says nothing of the new count.
      this.applied.delete(environmentId);
      return false;
    }
    if (seq === 0) return true; // nothing was announced in this environment (since Redis last lost it)
    if (applied !== undefined) return applied >= seq;
    return this.sync(environmentId).then(() => this.hears && (this.applied.get(environmentId) ?? 0) >= seq);
  }

  private sync(environmentId: string): Promise<void> {
    const pending = this.syncing.get(environmentId);
    if (pending) return pending.heard;
    let done!: () => void;
    const heard = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(() => sync.done(), this.commandTimeoutMs);
    timer.unref();
    const sync = {
      heard,
      done: () => {
        clearTimeout(timer);
        if (this.syncing.get(environmentId) === sync) this.syncing.delete(environmentId);
        done();
      },
    };
    this.syncing.set(environmentId, sync);
    const message = JSON.stringify({ kind: 'sync', environmentId });
    this.command.gatehouseAnnounce(changeSequenceKey(this.prefix, environmentId), this.channel, message, '0').catch(() => sync.done());
    return heard;
  }

  /** The environment's change number, or undefined when Redis cannot say. */
  async readSequence(environmentId: string): Promise<number | undefined> {
    if (this.current !== 'ok') return undefined;
    try {
      return Number((await this.command.get(changeSequenceKey(this.prefix, environmentId))) ?? 0);
    } catch (error) {
      this.reportFailure(error);
      return undefined;
    }
  }

  private heartbeat(): void {
    if (this.closed || !this.subscribed || this.command.status !== 'ready') return;
    if (this.heartbeatConfirmed - this.heartbeatHeard >= 3) return this.deafened('three heartbeats did not come back');
    const sequence = ++this.heartbeatSent;
    this.command.publish(this.heartbeatChannel, String(sequence)).then(
      () => {
        // A reply proves the command connection works, whatever failed before.
        if (this.commandFailed) {
          this.commandFailed = false;
          this.update();
        }
        this.heartbeatConfirmed = Math.max(this.heartbeatConfirmed, sequence);
      },
      (error: unknown) => this.reportFailure(error),
    );
  }

  private heardHeartbeat(sequence: number): void {
    if (!Number.isFinite(sequence)) return;
    this.heartbeatHeard = Math.max(this.heartbeatHeard, sequence);
    if (this.subscribed) this.setHearing(true);
  }

  /** The subscriber may never deliver again: stop trusting it and replace its connection. */
  private deafened(reason: string): void {
    if (!this.subscribed) return;
    if (this.hears || !this.announcedDeaf) {
      this.announcedDeaf = true;
      this.log.warn({ redis: 'deaf', reason }, 'Redis subscriber hears nothing: caches stop serving until it is resubscribed');
    }
    this.setHearing(false);
    this.subscribed = false;
    this.update();
    this.subscriber.disconnect(true); // 'ready' subscribes the new connection
  }

  private setHearing(hearing: boolean): void {
    if (hearing === this.hears || this.closed) return;
    this.hears = hearing;
    if (hearing && this.announcedDeaf) {
      this.announcedDeaf = false;
      this.log.info({ redis: 'hearing' }, 'Redis subscriber hears again: caches serve again');
    }
    this.emit('hearing', hearing);
  }

  /**
   * Connects both; resolves once ready and hearing its own heartbeat, or after `timeoutMs`, degraded
   * if Redis is not there.
   */
  async connect(timeoutMs = 5000): Promise<RedisState> {
    const connectOne = (c: Redis) => c.connect().catch(() => undefined);
    void connectOne(this.command);
    void connectOne(this.subscriber);
    const ready = new Promise<void>((resolve) => {
      const check = () => {
        if (this.current === 'ok' && this.hears) {
          this.off('state', check);
          this.off('hearing', check);
          resolve();
        }
      };
      this.on('state', check);
      this.on('hearing', check);
      check();
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    if (this.current !== 'ok') {
      this.announcedDown = true;
      this.log.warn({ redis: 'degraded' }, 'Redis is unreachable at start: using per-node fallbacks until it is back');
    }
    return this.current;
  }

  get state(): RedisState {
    return this.current;
  }

  /** A command failed: stop trusting Redis until the connection is ready again or a heartbeat is answered. */
  reportFailure(error: unknown): void {
    if (this.commandFailed) return;
    this.commandFailed = true;
    this.update(error);
  }

  /**
   * Announces a committed change to every node, numbered (see the class comment). Resolves once
   * Redis has taken it, or once it is known lost (logged; never rejects): the response of the
   * request that made the change waits for this.
   */
  async publishChange(change: Change): Promise<void> {
    const lost = (error?: unknown) => {
      this.log.warn(
        { change, err: error instanceof Error ? error.message : undefined },
        'Could not announce a change to other nodes; their cached copies expire within 30 s (sessions and profiles: 10 s)',
      );
      if (error !== undefined) this.reportFailure(error);
    };
    if (this.current !== 'ok') return lost();
    const key = changeSequenceKey(this.prefix, change.environmentId);
    await this.command.gatehouseAnnounce(key, this.channel, JSON.stringify(change), '1').then(() => undefined, lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeatTimer);
    this.removeAllListeners('state');
    this.removeAllListeners('hearing');
    await Promise.all([this.command, this.subscriber].map((c) => c.quit().catch(() => c.disconnect())));
  }

  private update(error?: unknown): void {
    if (this.closed) return;
    const next: RedisState = this.command.status === 'ready' && !this.commandFailed && this.subscribed ? 'ok' : 'degraded';
    if (next === this.current) return;
    this.current = next;
    // Logged once per transition, not per request.
    if (next === 'degraded' && !this.announcedDown) {
      this.announcedDown = true;
      this.log.warn(
        { redis: 'degraded', err: error instanceof Error ? error.message : undefined },
        'Redis is unreachable: rate limiting falls back to a per-node window and caches to short lifetimes',
      );
    } else if (next === 'ok' && this.announcedDown) {
      this.announcedDown = false;
      this.log.info({ redis: 'ok' }, 'Redis is reachable again: the shared rate-limit window and cache invalidation are back');
    }
    this.emit('state', next);
  }

  /** Whether the last thing logged was "unreachable". */
  private announcedDown = false;
}
