import type * as Prometheus from 'prom-client';
import type { Store } from '../db/index.js';
import { requireLazily } from '../lib/lazy.js';
import { registerHttpFamilies, RouteSeries } from './http-series.js';
import { emailOutbox, webhookOutbox } from './queries.js';

export { RouteSeries } from './http-series.js';

export type SignInOutcome = 'success' | 'failure' | 'second_factor';
export type WebhookOutcome = 'success' | 'retry' | 'failure';

/**
 * The families DESIGN fixes ("Details fixed for wave 3"), in a registry of their own. prom-client is
 * loaded only when METRICS_PORT is set: a node without metrics pays nothing at start.
 */
export class Metrics {
  readonly registry: Prometheus.Registry;
  private readonly signIns: Prometheus.Counter<'method' | 'outcome'>;
  private readonly webhookDeliveries: Prometheus.Counter<'outcome'>;
  private readonly rateLimitRefusals: Prometheus.Counter;
  private readonly series: RouteSeries[] = [];

  constructor(store: Store, options: { now?: () => number } = {}) {
    const prometheus = requireLazily('prom-client') as typeof Prometheus;
    const registry = new prometheus.Registry();
    this.registry = registry;
    const now = options.now ?? Date.now;
    prometheus.collectDefaultMetrics({ register: registry });
    registerHttpFamilies(registry, () => this.series);
    this.signIns = new prometheus.Counter({
      name: 'gatehouse_sign_ins_total',
      help: 'Sign-in attempts by method and outcome (success, failure, second_factor)',
      labelNames: ['method', 'outcome'] as const,
      registers: [registry],
    });
    this.webhookDeliveries = new prometheus.Counter({
      name: 'gatehouse_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (success; retry: failed, another attempt is scheduled; failure: given up)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    this.rateLimitRefusals = new prometheus.Counter({
      name: 'gatehouse_rate_limit_refusals_total',
      help: 'Requests refused with 429 rate_limited (environment limits and sign-in throttling)',
      registers: [registry],
    });
    // Read at each scrape, from the database every node shares: any node reports the same outbox.
    let outbox: Promise<{ email: Awaited<ReturnType<typeof emailOutbox>>; webhook: Awaited<ReturnType<typeof webhookOutbox>> }> | undefined;
    const readOutbox = () =>
      (outbox ??= (async () => {
        const at = now();
        const [email, webhook] = await Promise.all([emailOutbox(store.db, at), webhookOutbox(store.db, at)]);
        return { email, webhook };
      })().finally(() => setImmediate(() => (outbox = undefined))));
    new prometheus.Gauge({
      name: 'gatehouse_outbox_depth',
      help: 'Items waiting in the outbox, by kind (email, webhook)',
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        const read = await readOutbox();
        this.set({ kind: 'email' }, read.email.depth);
        this.set({ kind: 'webhook' }, read.webhook.depth);
      },
    });
    new prometheus.Gauge({
      name: 'gatehouse_outbox_oldest_age_seconds',
      help: 'Age of the oldest item waiting in the outbox, by kind (0 when none waits)',
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        const read = await readOutbox();
        this.set({ kind: 'email' }, read.email.oldestAgeMs / 1000);
        this.set({ kind: 'webhook' }, read.webhook.oldestAgeMs / 1000);
      },
    });
    // PostgreSQL only: SQLite has one connection and no pool.
    const pool = store.pool;
    if (pool) {
      new prometheus.Gauge({
        name: 'gatehouse_db_pool_connections',
        help: 'PostgreSQL pool connections by state (active, idle, waiting: requests queued for one)',
        labelNames: ['state'] as const,
        registers: [registry],
        collect() {
          this.set({ state: 'active' }, pool.totalCount - pool.idleCount);
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'waiting' }, pool.waitingCount);
        },
      });
    }
  }

  /** The series of one route (its template, never a path with ids in it); the hook observes it on each answer. */
  route(method: string, route: string): RouteSeries {
    const series = new RouteSeries(method, route);
    this.series.push(series);
    return series;
  }

  signIn(method: string, outcome: SignInOutcome): void {
    this.signIns.labels(method, outcome).inc();
  }

  webhookDelivery(outcome: WebhookOutcome): void {
    this.webhookDeliveries.labels(outcome).inc();
  }

  rateLimitRefusal(): void {
    this.rateLimitRefusals.inc();
  }

  /** The Prometheus text exposition, and its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
