import type * as Prometheus from 'prom-client';
import type { Store } from '../db/index.js';
import { requireLazily } from '../lib/lazy.js';
import { emailOutbox, webhookOutbox } from './queries.js';

export type SignInOutcome = 'success' | 'failure' | 'second_factor';
export type WebhookOutcome = 'success' | 'retry' | 'failure';

/** Seconds; from a fast cache hit to a slow password hash or a stalled database. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RouteSeries {
  duration: Prometheus.Histogram.Internal<'method' | 'route'>;
  byStatus: Map<number, Prometheus.Counter.Internal>;
}

/**
 * The families DESIGN fixes ("Details fixed for wave 3"), in a registry of their own. prom-client is
 * loaded only when METRICS_PORT is set: a node without metrics pays nothing at start.
 */
export class Metrics {
  readonly registry: Prometheus.Registry;
  private readonly requests: Prometheus.Counter<'method' | 'route' | 'status'>;
  private readonly durations: Prometheus.Histogram<'method' | 'route'>;
  private readonly signIns: Prometheus.Counter<'method' | 'outcome'>;
  private readonly webhookDeliveries: Prometheus.Counter<'outcome'>;
  private readonly rateLimitRefusals: Prometheus.Counter;
  /** Labelled series by "METHOD route": looking a child up by its labels costs more than the observation. */
  private readonly series = new Map<string, RouteSeries>();

  constructor(store: Store, options: { now?: () => number } = {}) {
    const prometheus = requireLazily('prom-client') as typeof Prometheus;
    const registry = new prometheus.Registry();
    this.registry = registry;
    const now = options.now ?? Date.now;
    prometheus.collectDefaultMetrics({ register: registry });
    this.requests = new prometheus.Counter({
      name: 'gatehouse_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    this.durations = new prometheus.Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'Time from the request to its answer, by method and route template',
      labelNames: ['method', 'route'] as const,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
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

  /** One answered request; `route` is the route's template (never a path with ids in it). */
  request(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { duration: this.durations.labels(method, route), byStatus: new Map() };
      this.series.set(key, series);
    }
    series.duration.observe(seconds);
    let counter = series.byStatus.get(status);
    if (!counter) {
      counter = this.requests.labels(method, route, String(status));
      series.byStatus.set(status, counter);
    }
    counter.inc();
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
