import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { Change } from '../db/changes.js';

export type RedisState = 'ok' | 'degraded';

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
  /** How often the node sends itself a heartbeat through Redis; three missed ones mean it is deaf. */
  heartbeatMs?: number;
}

/**
 * The two connections a node keeps to Redis: one for commands (the limiter, publishing) and one
 * subscribed to the channel of cached-row changes. Commands fail fast while Redis is away (no offline
 * queue), so callers fall back at once instead of piling up; ioredis keeps reconnecting, and the
 * link reports `ok` again once both connections are back and subscribed.
 *
 * A subscriber connection can also go quiet without closing (a half-open TCP connection, a
 * proxy that stopped forwarding). So the node publishes a heartbeat to a channel of its own every
 * `heartbeatMs` and listens for it on the subscriber: when three in a row do not come back, it is
 * deaf to other nodes' changes, the link reports `degraded` (the caches stop serving) and the
 * subscriber reconnects.
 *
 * Emits 'state' (RedisState) on every change of state and 'change' (the message text) per change
 * announced by a node.
 */
export class RedisLink extends EventEmitter {
  readonly command: Redis;
  readonly subscriber: Redis;
  readonly prefix: string;
  readonly channel: string;
  private readonly log: RedisLog;
  private commandFailed = false;
  private subscribed = false;
  /** Subscribed, but its own heartbeats stopped coming back. */
  private deaf = false;
  private readonly heartbeatChannel: string;
  private readonly heartbeatMs: number;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastHeartbeatHeard = 0;
  private current: RedisState = 'degraded';
  private closed = false;

  constructor(options: RedisLinkOptions) {
    super();
    this.prefix = options.prefix;
    this.channel = `${options.prefix}changes`;
    this.heartbeatChannel = `${options.prefix}heartbeat:${randomBytes(9).toString('base64url')}`;
    this.heartbeatMs = options.heartbeatMs ?? 1000;
    this.log = options.log;
    const common = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      autoResubscribe: false,
      commandTimeout: options.commandTimeoutMs ?? 1000,
      retryStrategy: (times: number) => Math.min(100 * times, 1000),
      lazyConnect: true,
    };
    // Auto-pipelining sends the scripts of concurrent requests in one write.
    this.command = new Redis(options.url, { ...common, connectionName: 'gatehouse', enableAutoPipelining: true });
    this.subscriber = new Redis(options.url, { ...common, connectionName: 'gatehouse-sub' });

    this.command.on('ready', () => {
      this.commandFailed = false;
      this.update();
    });
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel, this.heartbeatChannel).then(
        () => {
          this.subscribed = true;
          this.deaf = false;
          this.lastHeartbeatHeard = Date.now();
          this.update();
        },
        () => undefined,
      );
    });
    for (const connection of [this.command, this.subscriber]) {
      connection.on('close', () => {
        if (connection === this.subscriber) this.subscribed = false;
        this.update();
      });
      // ioredis logs unhandled 'error' events; the state change is what we report.
      connection.on('error', () => undefined);
    }
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.emit('change', message);
      else if (channel === this.heartbeatChannel) this.heardHeartbeat();
    });
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private heartbeat(): void {
    if (!this.subscribed || this.command.status !== 'ready') {
      this.lastHeartbeatHeard = Date.now(); // no heartbeat can be sent, so none is missed
      return;
    }
    if (Date.now() - this.lastHeartbeatHeard > 3 * this.heartbeatMs && !this.deaf) {
      this.deaf = true;
      this.update(new Error(`no heartbeat came back through the subscriber for ${3 * this.heartbeatMs} ms`));
      // A fresh connection, since this one may never deliver again; 'ready' subscribes it anew.
      this.subscribed = false;
      this.subscriber.disconnect(true);
      return;
    }
    if (this.command.status === 'ready') this.command.publish(this.heartbeatChannel, '').catch(() => undefined);
  }

  private heardHeartbeat(): void {
    this.lastHeartbeatHeard = Date.now();
    if (!this.deaf) return;
    this.deaf = false;
    this.update();
  }

  /** Connects both; resolves once ready or after `timeoutMs`, degraded if Redis is not there. */
  async connect(timeoutMs = 5000): Promise<RedisState> {
    const connectOne = (c: Redis) => c.connect().catch(() => undefined);
    void connectOne(this.command);
    void connectOne(this.subscriber);
    const ready = new Promise<void>((resolve) => {
      const check = () => {
        if (this.current === 'ok') {
          this.off('state', check);
          resolve();
        }
      };
      this.on('state', check);
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

  /** A command failed: stop trusting Redis until the connection is ready again. */
  reportFailure(error: unknown): void {
    if (this.commandFailed) return;
    this.commandFailed = true;
    this.update(error);
  }

  publishChange(change: Change): void {
    const lost = (error?: unknown) => {
      this.log.warn(
        { change, err: error instanceof Error ? error.message : undefined },
        'Could not announce a change to other nodes; their cached copies expire within 30 s (sessions and profiles: 10 s)',
      );
      if (error !== undefined) this.reportFailure(error);
    };
    if (this.current !== 'ok') return lost();
    this.command.publish(this.channel, JSON.stringify(change)).catch(lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeatTimer);
    this.removeAllListeners('state');
    await Promise.all([this.command, this.subscriber].map((c) => c.quit().catch(() => c.disconnect())));
  }

  private update(error?: unknown): void {
    if (this.closed) return;
    const next: RedisState = this.command.status === 'ready' && !this.commandFailed && this.subscribed && !this.deaf ? 'ok' : 'degraded';
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
