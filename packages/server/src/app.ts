import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { assetRoutes, brandingRoutes, uploadAuthorizer } from './assets/routes.js';
import { HandoffWay } from './auth/handoff.js';
import { handoffRoutes } from './auth/handoff-routes.js';
import { InvitationWay } from './auth/invitation.js';
import { invitationAuthRoutes } from './auth/invitation-routes.js';
import { passwordRoutes } from './auth/password-routes.js';
import { sessionAuthRoutes, switchOrganizationRoutes } from './auth/session-routes.js';
import { SsoWay } from './auth/sso.js';
import { ssoAuthRoutes } from './auth/sso-routes.js';
import { hostedRoutes } from './hosted/routes.js';
import type { ObjectStore } from './assets/object-store.js';
import { connectRedis, installCaches } from './app/caches.js';
import { createFramework } from './app/framework.js';
import { buildServices } from './app/services.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics/metrics.js';
import { installMetrics } from './metrics/plugin.js';
import { changeFeed } from './db/changes.js';
import type { Store } from './db/index.js';
import type { RowCacheOptions } from './db/row-cache.js';
import { installCors } from './http/cors.js';
import { credentialsPlugin } from './http/credentials.js';
import { healthRoutes } from './http/health.js';
import { identityRoutes } from './identity/routes.js';
import { sha256Hex } from './lib/crypto.js';
import { authFlowRoutes } from './auth/passwordless-routes.js';
import { Mailbox } from './mail/mailbox.js';
import { outboxRoutes } from './mail/routes.js';
import { EmailedSecrets } from './auth/emailed-secrets.js';
import { PasswordResetFlow } from './auth/password-reset.js';
import { PasswordlessWay } from './auth/passwordless.js';
import type { MailTransport } from './mail/transport.js';
import { OutboxWorker, type WorkerOptions } from './mail/worker.js';
import { memberRoutes } from './organizations/member-routes.js';
import { invitationRoutes } from './invitations/routes.js';
import { InvitationService } from './invitations/service.js';
import { domainRoutes } from './invitations/domain-routes.js';
import { roleRoutes } from './organizations/role-routes.js';
import { organizationRoutes } from './organizations/routes.js';
import { platformRoutes } from './platform/routes.js';
import { auditPlugin } from './operators/audit.js';
import { mirrorSecretKeyRoutes } from './operators/mirror.js';
import { operatorRoutes } from './operators/routes.js';
import { OperatorService } from './operators/service.js';
import { consoleRoutes } from './operators/console.js';
import { rateLimitPlugin } from './ratelimit/plugin.js';
import type { Clock } from './ratelimit/window.js';
import type { TenancyCacheOptions } from './tenancy/cache.js';
import { sessionRoutes } from './sessions/routes.js';
import { tenancyRoutes } from './tenancy/routes.js';
import { ProxyWarning, proxyWarningPlugin } from './http/proxy-warning.js';
import { DEFAULT_AUDIT_RETENTION_DAYS } from './config.js';
import { ssoCallbackRoutes, ssoConnectionRoutes } from './sso/routes.js';
import { SsoConnectionService, type SsoTestHooks } from './sso/service.js';
import { SsoFlowService } from './sso/flow.js';
import { SsoIdentityService } from './sso/identity-service.js';
import { userIdentityRoutes } from './sso/identity-routes.js';
import type { TenancyService } from './tenancy/service.js';
import { usageRoutes } from './usage/routes.js';
import { RequestRate, requestRatePlugin } from './usage/request-rate.js';
import { webhookRoutes } from './webhooks/routes.js';
import { WebhookService } from './webhooks/service.js';
import { WebhookWorker, type WebhookWorkerOptions } from './webhooks/worker.js';
import type { RegisteredRoute } from './app/framework.js';

export { DEFAULT_REDIS_PREFIX } from './app/caches.js';
export { JSON_BODY_LIMIT, type RegisteredRoute } from './app/framework.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's tenancy service, whose look-ups go through this app's cache. */
    tenancy: TenancyService;
    registeredRoutes: readonly RegisteredRoute[];
    outbox: OutboxWorker;
    /** The webhook delivery worker; tests drive it by hand (`app.webhooks.drain()`). */
    webhooks: WebhookWorker;
    /** Operators and their reserved environment; main.ts prints the setup link through it. */
    operators: OperatorService;
    /** Requests per minute for the console's chart; tests flush it to Redis by hand. */
    requestRate: RequestRate;
  }
}

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

/**
 * The whole service as one Fastify app over the given store and secrets: the framework, the shared
 * Redis link and caches, the services, then each domain's routes. main.ts is the only caller that
 * reads configuration; tests build the same app.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = await createFramework(options);
  if (options.metrics) installMetrics(app, options.metrics);
  const redis = await connectRedis(app, options);
  const {
    tenancy,
    cursors,
    now,
    usage,
    keys,
    tokens,
    assets,
    limiter,
    link,
    sessions,
    throttle,
    identity,
    door,
    password,
    signUpVerification,
    mail,
    emailCodes,
    organizations,
    organizationAccess,
    members,
    domains,
    membershipRequests,
    roles,
    verifyAccessToken,
    setOutboxWake,
    signatureThread,
  } = buildServices(options, redis, installCaches(app, options, redis), app.log);

  // A rotation on another node reaches this one as an environment change.
  const unsubscribeKeys = changeFeed(options.store.db).subscribe((change) => {
    if (change.kind === 'environment') keys.forget(change.environmentId);
  });
  app.addHook('onClose', async () => void unsubscribeKeys());
  app.addHook('onClose', () => signatureThread.close());

  const registerMirrors = mirrorSecretKeyRoutes(app);
  const operators = new OperatorService({
    store: options.store,
    tenancy,
    identity,
    baseUrl: options.config.baseUrl,
    now,
    mail,
  });
  app.decorate('operators', operators);
  // Entries past the retention are deleted at start and then hourly, on every node (the delete is idempotent).
  const retentionDays = options.auditRetentionDays === undefined ? DEFAULT_AUDIT_RETENTION_DAYS : options.auditRetentionDays;
  if (retentionDays !== null) {
    let pruning: NodeJS.Timeout | undefined;
    const prune = () =>
      operators.pruneAuditLog(retentionDays).catch((error: unknown) => app.log.error({ err: error }, 'could not prune the audit log'));
    app.addHook('onReady', async () => {
      void prune();
      pruning = setInterval(() => void prune(), 3_600_000);
      pruning.unref();
    });
    app.addHook('onClose', async () => clearInterval(pruning));
  }

  installCors(app);
  await app.register(credentialsPlugin, {
    tenancy,
    platformKeyHash: sha256Hex(options.platformKey),
    verifyAccessToken,
    operators: {
      environmentId: async () => (await operators.operatorsEnvironment()).environment.id,
      isReserved: (id) => operators.isReserved(id),
    },
  });
  await app.register(auditPlugin, { operators });
  await app.register(proxyWarningPlugin, {
    warning: new ProxyWarning(!!options.trustProxy?.length, now, (message) => app.log.warn(message)),
  });
  // Shared through Redis when configured, so the console's chart counts every node.
  const rate = new RequestRate(now, redis ? { redis: redis.command, prefix: redis.prefix, log: app.log } : undefined);
  app.decorate('requestRate', rate);
  await app.register(requestRatePlugin, { rate });
  if (limiter) await app.register(rateLimitPlugin, { limiter });
  await app.register(healthRoutes, { store: options.store, redis: link ? () => link.state : undefined });
  const ssoConnections = new SsoConnectionService(options.store, options.instanceSecret, options.config.baseUrl, now, options.sso);
  const ssoIdentities = new SsoIdentityService({ store: options.store, identity, now });
  identity.onAddressProven((tx, environment, userId) => ssoIdentities.dropUntrusted(tx, environment, userId));
  const ssoFlows = new SsoFlowService({
    store: options.store,
    connections: ssoConnections,
    identity,
    tenancy,
    baseUrl: options.config.baseUrl,
    now,
    identities: ssoIdentities,
  });
  await app.register(tenancyRoutes, { ssoConnections: (environment) => ssoFlows.publicList(environment) });
  await app.register(ssoConnectionRoutes, { connections: ssoConnections, tenancy });
  await app.register(ssoAuthRoutes, { flows: ssoFlows, sso: new SsoWay({ flows: ssoFlows, door }) });
  await app.register(ssoCallbackRoutes, { flows: ssoFlows, baseUrl: options.config.baseUrl });
  await app.register(userIdentityRoutes, { identities: ssoIdentities, flows: ssoFlows });
  await app.register(platformRoutes, { tenancy, cursors });
  await app.register(assetRoutes, {
    assets,
    authorizeUpload: uploadAuthorizer((environment, session, permission, action) =>
      organizations.assertCurrentPermission(environment, session, permission, action),
    ),
  });
  await app.register(brandingRoutes, { assets });
  await app.register(sessionAuthRoutes, { sessions });
  await app.register(sessionRoutes, { sessions, keys, tokens, tenancy });
  await app.register(passwordRoutes, { identity, password, signUpVerification });
  await app.register(identityRoutes, {
    identity,
    cursors,
    meOrganizations: (environment, session) => organizations.meOrganizations(environment, session),
  });
  await app.register(switchOrganizationRoutes, { sessions, organizations });
  await app.register(organizationRoutes, { organizations, cursors });
  await app.register(memberRoutes, { members, cursors });
  await app.register(roleRoutes, { roles, tenancy });
  await app.register(usageRoutes, { usage, now, rate, tenancy });
  await app.register(outboxRoutes, { mailbox: new Mailbox(options.store), tenancy });

  const outbox = new OutboxWorker(options.store, options.mail.transport, { log: app.log, ...options.mail.worker });
  app.decorate('outbox', outbox);
  setOutboxWake(() => outbox.wake());
  const secrets = new EmailedSecrets({ store: options.store, identity, mail, now });
  const passwordless = new PasswordlessWay({ store: options.store, identity, secrets, codes: emailCodes, door, now, throttle });
  const reset = new PasswordResetFlow({ store: options.store, identity, sessions, secrets, now, throttle });
  await app.register(authFlowRoutes, { passwordless, reset });
  const invitations = new InvitationService({
    store: options.store,
    access: organizationAccess,
    identity,
    now,
    baseUrl: options.config.baseUrl,
    mail,
  });
  await app.register(invitationRoutes, { invitations, members });
  await app.register(invitationAuthRoutes, { invitation: new InvitationWay({ invitations, door }) });
  await app.register(domainRoutes, { domains, requests: membershipRequests, members });
  await app.register(handoffRoutes, { handoff: new HandoffWay({ store: options.store, door, sessions, identity, now }) });
  await app.register(hostedRoutes, { tenancy, baseUrl: options.config.baseUrl });
  if (options.mail.startWorker !== false) app.addHook('onReady', async () => outbox.start());
  // The workers stop when the close begins, alongside the requests' drain, not after it: their
  // grace and the drain then share the shutdown's time.
  let outboxStopped: Promise<void> | undefined;
  app.addHook('preClose', async () => void (outboxStopped = outbox.stop()));
  app.addHook('onClose', async () => {
    await (outboxStopped ?? outbox.stop());
    options.mail.transport.close();
  });

  const { startWorker: startWebhookWorker, ...webhookWorkerOptions } = options.webhooks ?? {};
  const webhookService = new WebhookService(options.store, options.instanceSecret, now, {
    deliverNow: () => webhookWorker.deliverNow(),
    endpointsChanged: (environmentId) => webhookWorker.endpointsChanged(environmentId),
  });
  const webhookWorker: WebhookWorker = new WebhookWorker(
    options.store,
    webhookService,
    async (environmentId) => (await tenancy.getEnvironment(environmentId)).type,
    {
      log: app.log,
      ...(options.metrics ? { observe: options.metrics.webhookDelivery.bind(options.metrics) } : {}),
      ...webhookWorkerOptions,
    },
  );
  app.decorate('webhooks', webhookWorker);
  await app.register(webhookRoutes, { webhooks: webhookService, tenancy, cursors });
  // Events this node commits are fanned out soon, not at the next poll (unless their environment has no endpoint).
  const unwake = changeFeed(options.store.db).onEventsCommitted((environmentIds) => webhookWorker.eventsCommitted(environmentIds));
  if (startWebhookWorker !== false) app.addHook('onReady', async () => webhookWorker.start());
  let webhooksStopped: Promise<void> | undefined;
  app.addHook('preClose', async () => void (webhooksStopped = webhookWorker.stop()));
  app.addHook('onClose', async () => {
    unwake();
    await (webhooksStopped ?? webhookWorker.stop());
  });

  await app.register(operatorRoutes, { operators, cursors, baseUrl: options.config.baseUrl });
  await app.register(consoleRoutes);
  registerMirrors();

  app.decorate('tenancy', tenancy);

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  return app;
}
