import type { FastifyServerOptions } from 'fastify';
import type { ObjectStore } from '../assets/object-store.js';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import type { RowCacheOptions } from '../db/row-cache.js';
import type { MailTransport } from '../mail/transport.js';
import type { WorkerOptions } from '../mail/worker.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../ratelimit/window.js';
import type { SsoTestHooks } from '../sso/service.js';
import type { TenancyCacheOptions } from '../tenancy/cache.js';
import type { WebhookWorkerOptions } from '../webhooks/worker.js';

/** What buildApp is given: main.ts reads it from the configuration, tests build their own. */
export interface AppOptions {
  config: Pick<Config, 'baseUrl'>;
  store: Store;
  platformKey: string;
  instanceSecret: string;
  /** Where images live: openObjectStore(config, instanceSecret) in production. */
  objectStore: ObjectStore;
  logger?: FastifyServerOptions['logger'];
  mail: {
    /** Delivery for production environments; development mail is captured, never sent. */
    transport: MailTransport;
    /** Tests drive the worker by hand (`app.outbox.drain()`). */
    startWorker?: boolean;
    worker?: WorkerOptions;
  };
  /** Redis for the shared rate-limit window and cross-node cache invalidation. Unset: per node. */
  redis?: { url: string; prefix?: string; commandTimeoutMs?: number; heartbeatMs?: number } | undefined;
  /** `false` turns the limiter off (the benchmark's baseline). */
  rateLimit?: false | { clock?: Clock; granularityMs?: number; redisUsesClock?: boolean };
  /** Sign-in throttling's clock (tests); with `redisUsesClock` the Redis script uses it too. */
  throttle?: { clock?: Clock; redisUsesClock?: boolean };
  /**
   * Proxies (addresses, CIDR blocks, `loopback`…) whose X-Forwarded-For names the client. Unset:
   * the client address is the socket's peer.
   */
  trustProxy?: string[] | undefined;
  /** `false` turns the caches off: credentials, and the sessions and organization lists of `/v1/me*`. */
  cache?: false | (TenancyCacheOptions & { rows?: RowCacheOptions });
  /** Webhook delivery; `startWorker: false` leaves the worker to be driven by hand (tests). */
  webhooks?: (WebhookWorkerOptions & { startWorker?: boolean }) | undefined;
  /** Tests only: SSO presets pointed at local IdPs, and the fetch OIDC uses; by default the real providers. */
  sso?: SsoTestHooks | undefined;
  /** Days the operators' audit log keeps an entry (AUDIT_RETENTION_DAYS); null keeps all. Default 365. */
  auditRetentionDays?: number | null | undefined;
  /** Prometheus metrics (METRICS_PORT); main.ts serves them on their own listener. */
  metrics?: Metrics | undefined;
  /** The clock of time-dependent rules (token expiry, refresh grace, session lifetime); tests inject one. */
  now?: () => number;
}
