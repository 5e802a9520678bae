import type { FastifyInstance } from 'fastify';
import { apiKeyRoutes } from './apikeys/routes.js';
import { machineRoutes } from './machines/routes.js';
import { connectRedis, installCaches } from './app/caches.js';
import { compose } from './app/compose.js';
import { createFramework, type RegisteredRoute } from './app/framework.js';
import type { AppOptions } from './app/options.js';
import { assetRoutes, brandingRoutes, uploadAuthorizer } from './assets/routes.js';
import { handoffRoutes } from './auth/handoff-routes.js';
import { actorAuthRoutes } from './auth/actor-routes.js';
import { impersonationGuard } from './auth/actor-guard.js';
import { impersonationRoutes } from './impersonation/routes.js';
import { invitationAuthRoutes } from './auth/invitation-routes.js';
import { passkeyAuthRoutes } from './auth/passkey-routes.js';
import { passwordRoutes } from './auth/password-routes.js';
import { authFlowRoutes } from './auth/passwordless-routes.js';
import { sessionAuthRoutes, switchOrganizationRoutes } from './auth/session-routes.js';
import { secondFactorRoutes } from './auth/second-factor-routes.js';
import { ssoAuthRoutes } from './auth/sso-routes.js';
import { DEFAULT_AUDIT_RETENTION_DAYS } from './config.js';
import { changeFeed } from './db/changes.js';
import { hostedRoutes } from './hosted/routes.js';
import { installCors } from './http/cors.js';
import { credentialsPlugin } from './http/credentials.js';
import { healthRoutes } from './http/health.js';
import { ProxyWarning, proxyWarningPlugin } from './http/proxy-warning.js';
import { identityRoutes } from './identity/routes.js';
import { mfaRoutes, organizationMfaGate } from './mfa/routes.js';
import { passkeyRoutes } from './passkeys/routes.js';
import { domainRoutes } from './invitations/domain-routes.js';
import { invitationRoutes } from './invitations/routes.js';
import { sha256Hex } from './lib/crypto.js';
import { outboxRoutes } from './mail/routes.js';
import type { OutboxWorker } from './mail/worker.js';
import { installMetrics } from './metrics/plugin.js';
import { auditPlugin } from './operators/audit.js';
import { consoleRoutes } from './operators/console.js';
import { mirrorSecretKeyRoutes } from './operators/mirror.js';
import { operatorRoutes } from './operators/routes.js';
import type { OperatorService } from './operators/service.js';
import { memberRoutes } from './organizations/member-routes.js';
import { roleRoutes } from './organizations/role-routes.js';
import { organizationRoutes } from './organizations/routes.js';
import { platformRoutes } from './platform/routes.js';
import { rateLimitPlugin } from './ratelimit/plugin.js';
import { sessionRoutes } from './sessions/routes.js';
import { userIdentityRoutes } from './sso/identity-routes.js';
import { ssoCallbackRoutes, ssoConnectionRoutes } from './sso/routes.js';
import { tenancyRoutes } from './auth/environment-routes.js';
import type { TenancyService } from './tenancy/service.js';
import { requestRatePlugin, type RequestRate } from './usage/request-rate.js';
import { usageRoutes } from './usage/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import type { WebhookWorker } from './webhooks/worker.js';

export { DEFAULT_REDIS_PREFIX } from './app/caches.js';
export { JSON_BODY_LIMIT, type RegisteredRoute } from './app/framework.js';
export type { AppOptions } from './app/options.js';

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

/**
 * The whole service as one Fastify app over the given store and secrets: the framework, the shared
 * Redis link and caches, the services (built in app/compose.ts, the composition root), then the
 * plugins and each domain's routes, in the order the OpenAPI document lists them. main.ts is the
 * only caller that reads configuration; tests build the same app.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = await createFramework(options);
  if (options.metrics) installMetrics(app, options.metrics);
  const redis = await connectRedis(app, options);
  const s = compose(options, redis, installCaches(app, options, redis), app.log);
  const { tenancy, cursors, now, operators, ways, outbox, webhookWorker, mfa } = s;

  // A rotation on another node reaches this one as an environment change.
  const unsubscribeKeys = changeFeed(options.store.db).subscribe((change) => {
    if (change.kind === 'environment') s.keys.forget(change.environmentId);
  });
  app.addHook('onClose', async () => void unsubscribeKeys());
  app.addHook('onClose', () => s.signatureThread.close());

  const registerMirrors = mirrorSecretKeyRoutes(app);
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
    verifyAccessToken: (token, request) => s.sessions.verifyAccessToken(token, request),
    operators: {
      environmentId: async () => (await operators.operatorsEnvironment()).environment.id,
      isReserved: (id) => operators.isReserved(id),
    },
  });
  await app.register(auditPlugin, { operators });
  // Organizations that require MFA: checked app-wide, after the credentials.
  // Impersonated sessions are refused what they may not do, before any other rule (docs/impersonation.md).
  await app.register(impersonationGuard);
  await app.register(organizationMfaGate, { mfa });
  await app.register(proxyWarningPlugin, {
    warning: new ProxyWarning(!!options.trustProxy?.length, now, (message) => app.log.warn(message)),
  });
  app.decorate('requestRate', s.requestRate);
  await app.register(requestRatePlugin, { rate: s.requestRate });
  if (s.limiter) await app.register(rateLimitPlugin, { limiter: s.limiter });
  await app.register(healthRoutes, { store: options.store, redis: redis ? () => redis.state : undefined });
  await app.register(tenancyRoutes, { ssoConnections: (environment) => s.ssoFlows.publicList(environment) });
  await app.register(ssoConnectionRoutes, { connections: s.ssoConnections, tenancy });
  await app.register(ssoAuthRoutes, { flows: s.ssoFlows, sso: ways.sso });
  await app.register(ssoCallbackRoutes, { flows: s.ssoFlows, baseUrl: options.config.baseUrl });
  await app.register(userIdentityRoutes, { identities: s.ssoIdentities, flows: s.ssoFlows });
  await app.register(platformRoutes, { tenancy, cursors });
  await app.register(assetRoutes, {
    assets: s.assets,
    authorizeUpload: uploadAuthorizer((environment, session, permission, action) =>
      s.organizations.assertCurrentPermission(environment, session, permission, action),
    ),
  });
  await app.register(brandingRoutes, { assets: s.assets });
  await app.register(sessionAuthRoutes, { sessions: s.sessions });
  await app.register(sessionRoutes, { sessions: s.sessions, keys: s.keys, tokens: s.tokens, tenancy });
  await app.register(passwordRoutes, { identity: s.identity, password: ways.password, signUpVerification: ways.signUpVerification });
  await app.register(secondFactorRoutes, { step: ways.secondFactor });
  await app.register(identityRoutes, {
    identity: s.identity,
    passwords: s.passwords,
    cursors,
    meOrganizations: (environment, session) => s.organizations.meOrganizations(environment, session),
    recentlyVerified: (session) => (tx, environment) => mfa.reverification.requireRecentVerification(environment, session, tx),
  });
  await app.register(switchOrganizationRoutes, { sessions: s.sessions, organizations: s.organizations });
  await app.register(organizationRoutes, { organizations: s.organizations, sessions: s.sessions, cursors });
  await app.register(mfaRoutes, { mfa, identity: s.identity });
  await app.register(passkeyRoutes, { passkeys: s.passkeys });
  await app.register(passkeyAuthRoutes, { passkey: ways.passkey });
  await app.register(memberRoutes, { members: s.members, cursors });
  await app.register(roleRoutes, { roles: s.roles, tenancy });
  await app.register(usageRoutes, { usage: s.usage, now, rate: s.requestRate, tenancy });
  await app.register(outboxRoutes, { mailbox: s.mailbox, tenancy, cursors });
  await app.register(apiKeyRoutes, { apiKeys: s.apiKeys, cursors });
  await app.register(machineRoutes, { machines: s.machines });

  app.decorate('outbox', outbox);
  await app.register(authFlowRoutes, { passwordless: ways.passwordless, reset: ways.reset });
  await app.register(invitationRoutes, { invitations: s.invitations, members: s.members });
  await app.register(invitationAuthRoutes, { invitation: ways.invitation });
  await app.register(domainRoutes, { domains: s.domains, requests: s.membershipRequests, members: s.members });
  await app.register(handoffRoutes, { handoff: ways.handoff });
  await app.register(actorAuthRoutes, { actor: ways.actor });
  await app.register(impersonationRoutes, { impersonation: s.impersonation });
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

  app.decorate('webhooks', webhookWorker);
  await app.register(webhookRoutes, { webhooks: s.webhooks, tenancy, cursors });
  // Events this node commits are fanned out soon, not at the next poll (unless their environment has no endpoint).
  const unwake = changeFeed(options.store.db).onEventsCommitted((environmentIds) => webhookWorker.eventsCommitted(environmentIds));
  if (options.webhooks?.startWorker !== false) app.addHook('onReady', async () => webhookWorker.start());
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
