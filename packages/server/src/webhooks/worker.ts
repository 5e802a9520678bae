import type { EnvironmentId } from '../lib/ids.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/index.js';
import { newId } from '../lib/crypto.js';
import { graceTimer, STOP_GRACE_MS } from '../lib/grace.js';
import { QuietEnvironments } from './quiet-environments.js';
import { systemResolver, type Resolver } from '../lib/addresses.js';
import * as q from './queries.js';
import { signature, type SecretBox } from './secrets.js';
import { JITTER, RETRY_SCHEDULE_MS, retryDelayMs } from './schedule.js';
import { sendWebhook } from './sender.js';

/** How long the delivery log and delivered events are kept. */
export const RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 10 * 60_000;
export const SEND_TIMEOUT_MS = 15_000;
/** Changes committed within this long of each other are fanned out by one run. */
const WAKE_DELAY_MS = 50;

export { JITTER, RETRY_SCHEDULE_MS, retryDelayMs };

export interface WebhookWorkerOptions {
  /** Told each attempt's outcome (the metrics): sent, to be retried, or given up. */
  observe?: (outcome: 'success' | 'retry' | 'failure') => void;
  /** Scheduling clock (due times, leases); tests inject one. Signatures carry the real time. */
  clock?: () => number;
  pollMs?: number;
  /** How long a claimed attempt is this worker's; past it, another worker may send it again. */
  leaseMs?: number;
  batchSize?: number;
  timeoutMs?: number;
  /** DNS resolution of endpoint hosts; tests inject one to rebind a name to loopback. */
  resolve?: Resolver;
  random?: () => number;
  log?: Pick<FastifyBaseLogger, 'warn' | 'error'>;
}

/**
 * Delivers webhook events outside any request, at least once. Two steps, each safe with several
 * nodes: fan-out turns an event into one pending attempt per subscribed endpoint (in a transaction,
 * events locked with SKIP LOCKED on PostgreSQL); delivery claims due attempts with a lease, sends,
 * and records the outcome only while the lease holds. A node that dies mid-send leaves the attempt
 * pending, and it is sent again once the lease runs out; a node that stops (shutting down) gives its
 * unfinished attempts back at once instead.
 */
export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  /** When the scheduled run is due, and whether it only fans out (a wake) or also delivers (a poll). */
  private scheduled: { at: number; deliver: boolean } | undefined;
  private running: Promise<{ fannedOut: number; sent: number }> | undefined;
  private stopped = true;
  /** Claimed attempts not yet finished, by id, with their lease. */
  private readonly claimed = new Map<string, { environmentId: EnvironmentId; lease: number }>();
  private readonly clock: () => number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private readonly resolve: Resolver;
  private readonly random: () => number;
  private lastPrunedAt = -Infinity;
  /** When due attempts were last looked for: at least every pollMs, however often wakes come. */
  private lastDeliveredAt = -Infinity;
  private readonly quiet = new QuietEnvironments();

  constructor(
    private readonly store: Store,
    private readonly secrets: Pick<SecretBox, 'signingSecrets'>,
    private readonly environmentType: (environmentId: EnvironmentId) => Promise<'development' | 'production'>,
    private readonly options: WebhookWorkerOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.pollMs = options.pollMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? SEND_TIMEOUT_MS;
    this.leaseMs = options.leaseMs ?? this.timeoutMs + 45_000;
    this.batchSize = options.batchSize ?? 50;
    this.resolve = options.resolve ?? systemResolver;
    this.random = options.random ?? Math.random;
  }

  start(): void {
    this.stopped = false;
    // The first run waits for the first poll: a starting node answers its first requests (health checks) first.
    this.schedule(this.pollMs, true);
  }

  /**
   * Stops claiming. Sends under way may finish within `graceMs`; then every attempt this worker
   * claimed and did not finish is given back (its lease released), and another node sends it at
   * once. An outcome that arrives after that is dropped: the attempt is no longer this worker's.
   */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.scheduled = undefined;
    const grace = graceTimer(graceMs);
    await Promise.race([this.running?.catch(() => undefined), grace.elapsed]);
    grace.cancel();
    const claimed = [...this.claimed];
    this.claimed.clear();
    for (const [id, claim] of claimed) {
      try {
        await q.releaseAttempt(this.store.db, claim.environmentId, id, claim.lease);
      } catch (error) {
        // The lease then runs out by itself: the delivery is late, not lost.
        this.options.log?.warn({ err: error, deliveryId: id }, 'could not give a webhook delivery back at shutdown');
      }
    }
  }

  /**
   * Asks for a run soon, e.g. after a change committed an event. Wakes within WAKE_DELAY_MS share
   * one run: under load (every sign-in commits an event) a run fans out many events in one
   * transaction instead of one run, and its statements, per change.
   */
  wake(): void {
    if (!this.stopped) this.schedule(WAKE_DELAY_MS, false);
  }

  /**
   * Events were committed on this node: a run soon, unless a fan-out of the last few polls found
   * none of their environments with an enabled endpoint. An environment without webhooks (most)
   * commits an event at every sign-in, and waking for each cost more than the sign-in's own
   * statements; its events wait for the next poll, which drops them in batches. An endpoint created
   * through another node is found by a poll (its events are sent within pollMs), and this node is
   * prompt for it again once the hint runs out.
   */
  eventsCommitted(environmentIds: readonly string[]): void {
    if (!this.quiet.allQuiet(environmentIds)) this.wake();
  }

  /** An endpoint of the environment was created or changed on this node: its next events wake the worker. */
  endpointsChanged(environmentId: string): void {
    this.quiet.endpointsChanged(environmentId);
  }

  /** Sends due attempts now, e.g. a manual retry ("sends that message again now"). */
  deliverNow(): void {
    if (!this.stopped) this.schedule(0, true);
  }

  /** Keeps the sooner of the scheduled run and this one (a later one is dropped: each run schedules the next poll). */
  private schedule(delay: number, deliver: boolean): void {
    const at = performance.now() + delay;
    const current = this.scheduled;
    if (current && current.at <= at) {
      current.deliver ||= deliver;
      return;
    }
    clearTimeout(this.timer);
    const run = { at, deliver };
    this.scheduled = run;
    this.timer = setTimeout(() => {
      if (this.scheduled === run) this.scheduled = undefined;
      void this.tick(run.deliver);
    }, delay);
    this.timer.unref();
  }

  private async tick(deliver: boolean): Promise<void> {
    if (this.running) {
      // A run is under way: this one goes after it rather than being lost.
      await this.running.catch(() => undefined);
      if (!this.stopped) this.schedule(0, deliver);
      return;
    }
    let busy = false;
    try {
      const done = await this.run(deliver);
      // A full batch may have left more behind; a sent batch may have made more attempts due.
      busy = done.fannedOut === this.batchSize || done.sent > 0;
    } catch (error) {
      this.options.log?.error({ err: error }, 'webhook worker run failed');
    }
    if (!this.stopped) this.schedule(busy ? 0 : this.pollMs, true);
  }

  /** Fans out new events and sends one batch of due attempts; returns how much it handled. */
  async runOnce(): Promise<number> {
    // A run under way may be one that does not deliver: wait for it, then run one that does.
    while (this.running) await this.running.catch(() => undefined);
    const done = await this.run(true);
    return done.fannedOut + done.sent;
  }

  /**
   * Fans out, then sends due attempts when asked (a poll), when the fan-out made new ones, or when
   * none were looked for in the last pollMs: a run woken by events that no endpoint wants reads no
   * attempts, and a stream of such wakes never holds retries back.
   */
  private run(deliver: boolean): Promise<{ fannedOut: number; sent: number }> {
    return (this.running ??= (async () => {
      if (deliver) this.quiet.polled();
      await this.pruneNowAndThen();
      const fanned = await this.fanOut();
      const due = deliver || fanned.deliveries > 0 || performance.now() - this.lastDeliveredAt >= this.pollMs;
      if (due) this.lastDeliveredAt = performance.now();
      const sent = due ? await this.deliverDue() : 0;
      return { fannedOut: fanned.events, sent };
    })().finally(() => {
      this.running = undefined;
    }));
  }

  /** Runs until nothing is due now (by the worker's clock). */
  async drain(): Promise<void> {
    while ((await this.runOnce()) > 0);
  }

  /** Every 10 minutes, drops attempts and delivered events older than 30 days. */
  private async pruneNowAndThen(): Promise<void> {
    const now = this.clock();
    if (now - this.lastPrunedAt < PRUNE_EVERY_MS) return;
    this.lastPrunedAt = now;
    while ((await q.pruneBefore(this.store.db, now - RETENTION_MS, 1000)) > 0);
  }

  private async fanOut(): Promise<{ events: number; deliveries: number }> {
    const startedAt = this.quiet.fanOutStarting();
    return this.store.db.transaction().execute(async (tx) => {
      const events = await q.claimUnfannedEvents(tx, this.store.dialect, this.batchSize);
      const endpointsOf = new Map<string, q.EndpointRow[]>();
      const unwanted = new Map<EnvironmentId, string[]>();
      const now = this.clock();
      let deliveries = 0;
      for (const event of events) {
        let endpoints = endpointsOf.get(event.environment_id);
        if (!endpoints) {
          endpoints = await q.listEnabledEndpoints(tx, event.environment_id);
          endpointsOf.set(event.environment_id, endpoints);
          this.quiet.found(event.environment_id, endpoints.length, startedAt);
        }
        const subscribed = endpoints.filter((e) => e.event_types === null || (JSON.parse(e.event_types) as string[]).includes(event.type));
        if (subscribed.length === 0) {
          const ids = unwanted.get(event.environment_id);
          if (ids) ids.push(event.id);
          else unwanted.set(event.environment_id, [event.id]);
          continue;
        }
        for (const endpoint of subscribed) {
          await q.insertDelivery(tx, event.environment_id, {
            id: newId('whd', event.environment_id),
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            attempt: 1,
            status: 'pending',
            response_status: null,
            error: null,
            next_attempt_at: now,
            locked_until: null,
            created_at: now,
          });
          deliveries++;
        }
        await q.markFannedOut(tx, event.environment_id, event.id);
      }
      // Most events go to no endpoint (an environment without webhooks): one statement per environment.
      for (const [environmentId, ids] of unwanted) await q.deleteEvents(tx, environmentId, ids);
      return { events: events.length, deliveries };
    });
  }

  private async deliverDue(): Promise<number> {
    const claimed = await q.claimDueAttempts(this.store.db, {
      now: this.clock(),
      leaseMs: this.leaseMs,
      batchSize: this.batchSize,
      dialect: this.store.dialect,
    });
    // Attempts of one batch often share an endpoint: read each endpoint and environment type once.
    const endpoints = new Map<string, Promise<q.EndpointRow | undefined>>();
    const types = new Map<string, Promise<'development' | 'production'>>();
    const context = {
      endpoint: (environmentId: EnvironmentId, endpointId: string) => {
        const key = `${environmentId}/${endpointId}`;
        if (!endpoints.has(key)) endpoints.set(key, q.findEndpoint(this.store.db, environmentId, endpointId));
        return endpoints.get(key)!;
      },
      environmentType: (environmentId: EnvironmentId) => {
        if (!types.has(environmentId)) types.set(environmentId, this.environmentType(environmentId));
        return types.get(environmentId)!;
      },
    };
    for (const attempt of claimed) this.claimed.set(attempt.id, { environmentId: attempt.environment_id, lease: attempt.locked_until! });
    await Promise.all(
      claimed.map((attempt) =>
        this.send(attempt, context)
          .catch((error: unknown) => this.options.log?.error({ err: error, deliveryId: attempt.id }, 'webhook delivery failed'))
          .finally(() => this.claimed.delete(attempt.id)),
      ),
    );
    return claimed.length;
  }

  private async send(
    attempt: q.DeliveryRow,
    context: {
      endpoint(environmentId: EnvironmentId, endpointId: string): Promise<q.EndpointRow | undefined>;
      environmentType(environmentId: EnvironmentId): Promise<'development' | 'production'>;
    },
  ): Promise<void> {
    const db = this.store.db;
    const environmentId = attempt.environment_id;
    const lease = attempt.locked_until!;
    const endpoint = await context.endpoint(environmentId, attempt.endpoint_id);
    const event = await q.findEvent(db, environmentId, attempt.event_id);
    if (!endpoint || endpoint.enabled !== 1 || !event) {
      await q.finishAttempt(db, environmentId, attempt.id, lease, {
        status: 'failed',
        responseStatus: null,
        error: !event ? 'The event is no longer stored' : 'The endpoint is disabled',
        nextAttemptAt: null,
      });
      this.options.observe?.('failure');
      return;
    }

    const timestamp = Math.floor(Date.now() / 1000);
    const signatures = this.secrets
      .signingSecrets(endpoint, this.clock())
      .map((secret) => signature(secret, event.id, timestamp, event.body));
    const outcome = await sendWebhook({
      url: endpoint.url,
      environmentType: await context.environmentType(environmentId),
      headers: { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') },
      body: event.body,
      timeoutMs: this.timeoutMs,
      resolve: this.resolve,
    });

    if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
      await q.finishAttempt(db, environmentId, attempt.id, lease, {
        status: 'succeeded',
        responseStatus: outcome.status,
        error: null,
        nextAttemptAt: null,
      });
      this.options.observe?.('success');
      return;
    }
    const responseStatus = outcome.kind === 'response' ? outcome.status : null;
    if (responseStatus === 410) {
      // Gone: the receiver asks for no more deliveries. The endpoint is disabled until an operator enables it.
      await db.transaction().execute(async (tx) => {
        if (
          !(await q.finishAttempt(tx, environmentId, attempt.id, lease, {
            status: 'failed',
            responseStatus,
            error: 'The receiver answered 410 Gone: endpoint disabled',
            nextAttemptAt: null,
          }))
        )
          return;
        await q.updateEndpoint(tx, environmentId, endpoint.id, {
          enabled: 0,
          disabled_reason: 'The receiver answered 410 Gone',
          updated_at: this.clock(),
        });
        await q.failPendingAttempts(tx, environmentId, endpoint.id, 'The endpoint was disabled after a 410 Gone');
      });
      this.options.observe?.('failure');
      return;
    }
    const error = outcome.kind === 'error' ? outcome.error : `The receiver answered ${outcome.status}`;
    const delay = retryDelayMs(attempt.attempt, outcome.kind === 'response' ? outcome.retryAfterMs : undefined, this.random);
    const nextAttemptAt = delay === undefined ? null : this.clock() + delay;
    this.options.observe?.(nextAttemptAt === null ? 'failure' : 'retry');
    await db.transaction().execute(async (tx) => {
      if (!(await q.finishAttempt(tx, environmentId, attempt.id, lease, { status: 'failed', responseStatus, error, nextAttemptAt })))
        return;
      if (nextAttemptAt === null) return;
      await q.insertDelivery(tx, environmentId, {
        id: newId('whd', environmentId),
        endpoint_id: attempt.endpoint_id,
        event_id: attempt.event_id,
        event_type: attempt.event_type,
        attempt: attempt.attempt + 1,
        status: 'pending',
        response_status: null,
        error: null,
        next_attempt_at: nextAttemptAt,
        locked_until: null,
        created_at: this.clock(),
      });
    });
  }
}
