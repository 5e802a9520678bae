import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { assetRoutes, brandingRoutes, uploadAuthorizer } from './assets/routes.js';
import type { ObjectStore } from './assets/object-store.js';
import { AssetService } from './assets/service.js';
import type { Config } from './config.js';
import { changeFeed, parseChange } from './db/changes.js';
import type { Store } from './db/index.js';
import type { RowCacheOptions } from './db/row-cache.js';
import { installCors } from './http/cors.js';
import { credentialsPlugin, type AccessTokenVerifier, type CredentialKind } from './http/credentials.js';
import { ApiError } from './lib/errors.js';
import { answerClientError, answerFrameworkError, installErrorHandling, MAX_PARAM_LENGTH } from './http/error-handler.js';
import { installSecurityHeaders, securityHeaders } from './http/security-headers.js';
import { addErrorResponses, errorResponseComponents, type DocumentedRoute } from './http/openapi-errors.js';
import { healthRoutes } from './http/health.js';
import { identityRoutes } from './identity/routes.js';
import { IdentityService } from './identity/service.js';
import { warmUpPasswordHashing } from './identity/passwords.js';
import { validatorCompiler } from './http/validation.js';
import { CursorCodec, deriveSubkey } from './lib/cursor.js';
import { sha256Hex } from './lib/crypto.js';
import { authFlowRoutes } from './flows/auth-routes.js';
import { Mailbox } from './flows/mailbox.js';
import { outboxRoutes } from './flows/routes.js';
import { FlowService } from './flows/service.js';
import type { MailTransport } from './flows/transport.js';
import { OutboxWorker, type WorkerOptions } from './flows/worker.js';
import { RedisLink } from './lib/redis.js';
import { OrganizationAccess } from './organizations/access.js';
import { memberRoutes } from './organizations/member-routes.js';
import { MemberService } from './organizations/member-service.js';
import { roleRoutes } from './organizations/role-routes.js';
import { RoleService } from './organizations/role-service.js';
import { organizationRoutes } from './organizations/routes.js';
import { newMeOrganizationsCache, OrganizationService } from './organizations/service.js';
import { platformRoutes } from './platform/routes.js';
import { RateLimiter } from './ratelimit/limiter.js';
import { rateLimitPlugin } from './ratelimit/plugin.js';
import { SignInThrottle } from './ratelimit/throttle.js';
import type { Clock } from './ratelimit/window.js';
import { TenancyCache, type TenancyCacheOptions } from './tenancy/cache.js';
import { RefreshTokens } from './sessions/refresh-token.js';
import { sessionRoutes } from './sessions/routes.js';
import { newSessionCache, SessionService } from './sessions/service.js';
import { SigningKeys } from './sessions/signing-keys.js';
import { AccessTokens } from './sessions/tokens.js';
import { tenancyRoutes } from './tenancy/routes.js';
import { TenancyService } from './tenancy/service.js';
import type { Environment } from './tenancy/settings.js';
import { usageRoutes } from './usage/routes.js';
import { UsageService } from './usage/service.js';
import { webhookRoutes } from './webhooks/routes.js';
import { WebhookService } from './webhooks/service.js';
import { WebhookWorker, type WebhookWorkerOptions } from './webhooks/worker.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's tenancy service, whose look-ups go through this app's cache. */
    tenancy: TenancyService;
    registeredRoutes: readonly RegisteredRoute[];
    outbox: OutboxWorker;
    /** The webhook delivery worker; tests drive it by hand (`app.webhooks.drain()`). */
    webhooks: WebhookWorker;
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
  /** The clock of time-dependent rules (token expiry, refresh grace, session lifetime); tests inject one. */
  now?: () => number;
}

export type RegisteredRoute = DocumentedRoute;

export const DEFAULT_REDIS_PREFIX = 'gh:';

// A \u0000 escape that is not itself escaped (an odd run of backslashes before it).
const JSON_NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/;

function nulRefused(where: string): ApiError {
  return new ApiError('invalid_request', `${where} contains a NUL character (\\u0000), which no field accepts. Remove it and send again.`);
}

export const JSON_BODY_LIMIT = 1024 * 1024;

const SECURITY_SCHEME: Record<CredentialKind, string> = {
  publishable: 'publishableKey',
  secret: 'secretKey',
  session: 'accessToken',
  platform: 'platformKey',
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const headers = securityHeaders(options.config.baseUrl);
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: JSON_BODY_LIMIT,
    exposeHeadRoutes: false,
    // Every answer the framework gives on its own is in the API's shape and headers (error-handler.ts).
    return503OnClosing: false,
    frameworkErrors: answerFrameworkError(headers),
    clientErrorHandler: answerClientError(headers),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // request.ip: the socket's peer, or the client a trusted proxy names.
    trustProxy: options.trustProxy && options.trustProxy.length > 0 ? options.trustProxy : false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  installSecurityHeaders(app, headers);
  installErrorHandling(app, headers);

  // The API speaks JSON only; Fastify's default text/plain parser would let a string reach
  // validation and turn a 415 into a confusing 400.
  app.removeContentTypeParser('text/plain');
  // An empty body with a JSON content type is treated as no body, so body-less POSTs work from
  // clients that always set the header; routes that need a body still refuse it by schema.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    if (JSON_NUL_ESCAPE.test(text)) return done(nulRefused('The request body'), undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(
        new ApiError('invalid_request', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.'),
        undefined,
      );
    }
  });

  // PostgreSQL cannot store NUL in text (SQLite can), so refuse it everywhere, before routing.
  app.addHook('onRequest', async (request) => {
    if (/%00/i.test(request.url)) throw nulRefused('The URL');
  });

  // Each route's security requirement and error answers in the OpenAPI document come from its config.
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    const kinds = route.config?.credentials ?? [];
    route.schema = { ...route.schema, security: kinds.map((k) => ({ [SECURITY_SCHEME[k]]: [] })) };
    const counted = options.rateLimit !== false && route.config?.rateLimit !== false && kinds.some((k) => k !== 'platform');
    for (const method of [route.method].flat()) {
      const hasBody = ['POST', 'PUT', 'PATCH'].includes(method);
      routes.push({ method, url: route.url, credentials: kinds, rateLimited: counted, hasBody, hasParams: route.url.includes(':'), errors: route.config?.errors ?? [] });
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Gatehouse API',
        version: '1.0.0',
        description: 'Authentication and organizations. Every credential is sent as "Authorization: Bearer <credential>".',
      },
      servers: [{ url: options.config.baseUrl }],
      components: {
        securitySchemes: {
          publishableKey: { type: 'http', scheme: 'bearer', description: 'Publishable key: pk_test_… or pk_live_…' },
          secretKey: { type: 'http', scheme: 'bearer', description: 'Secret key: sk_test_… or sk_live_…; server side only' },
          accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Session access token' },
          platformKey: { type: 'http', scheme: 'bearer', description: 'Operator platform key: plk_…' },
        },
        responses: errorResponseComponents(),
      },
    },
    transformObject: (document) => addErrorResponses('openapiObject' in document ? document.openapiObject : document.swaggerObject, routes),
  });

  let redis: RedisLink | undefined;
  if (options.redis) {
    redis = new RedisLink({
      url: options.redis.url,
      prefix: options.redis.prefix ?? DEFAULT_REDIS_PREFIX,
      log: app.log,
      ...(options.redis.commandTimeoutMs ? { commandTimeoutMs: options.redis.commandTimeoutMs } : {}),
      ...(options.redis.heartbeatMs ? { heartbeatMs: options.redis.heartbeatMs } : {}),
    });
    const link = redis;
    app.addHook('onClose', () => link.close());
    await link.connect();
  }

  const cache = options.cache === false ? undefined : new TenancyCache(options.cache);
  const sessionCache = options.cache === false ? undefined : newSessionCache(options.cache?.rows);
  const meOrganizationsCache = options.cache === false ? undefined : newMeOrganizationsCache(options.cache?.rows);
  if (cache && sessionCache && meOrganizationsCache) {
    const feed = changeFeed(options.store.db);
    const unsubscribe = feed.subscribe((change) => {
      if (change.kind === 'environment') cache.invalidateEnvironment(change.environmentId);
      sessionCache.apply(change);
      meOrganizationsCache.apply(change);
    });
    app.addHook('onClose', async () => void unsubscribe());
    // Untrusted (changes may be missed), the session caches serve nothing, since a revoked session
    // must be refused at once; credentials are still cached, for 1 s.
    const setTrusted = (trusted: boolean) => {
      cache.setTrusted(trusted);
      sessionCache.setTrusted(trusted);
      meOrganizationsCache.setTrusted(trusted);
    };
    if (redis) {
      const link = redis;
      const unrelay = feed.relay((change) => link.publishChange(change));
      // Changes may be missed while Redis is away or the subscriber hears nothing.
      const hearsChanges = () => link.state === 'ok' && link.hearing;
      link.on('change', (message: string) => {
        const change = parseChange(message);
        if (change) return feed.deliver(change);
        // Not a change this version understands: whatever it was, forget everything cached.
        app.log.warn({ message: message.slice(0, 200) }, 'Unreadable change announcement from Redis; caches cleared');
        setTrusted(hearsChanges());
      });
      link.on('state', () => setTrusted(hearsChanges()));
      link.on('hearing', () => setTrusted(hearsChanges()));
      setTrusted(hearsChanges());
      app.addHook('onClose', async () => void unrelay());
    } else {
      // Without Redis, other nodes sharing PostgreSQL cannot tell this one about their changes.
      setTrusted(options.store.dialect === 'sqlite');
    }
  }

  const tenancy = new TenancyService(options.store, { cache });
  const cursors = new CursorCodec(deriveSubkey(options.instanceSecret, 'cursor'));
  const now = options.now ?? Date.now;
  const usage = new UsageService(options.store, tenancy, now);
  const keys = new SigningKeys(options.store, options.instanceSecret, now);
  const tokens = new AccessTokens(keys, options.config.baseUrl, now);
  const assets = new AssetService(options.store, options.objectStore);
  const acceptImageUrl = (environment: Environment, url: string) => assets.acceptImageUrl(environment, url);
  const sessions: SessionService = new SessionService({
    store: options.store,
    tokens,
    refreshTokens: new RefreshTokens(options.instanceSecret),
    usage,
    now,
    extraClaims: (context) => organizations.claimsFor(context),
    cache: sessionCache,
  });
  const throttle = new SignInThrottle({
    clock: options.throttle?.clock ?? Date.now,
    redis,
    ...(options.throttle?.redisUsesClock ? { redisUsesClock: true } : {}),
  });
  const identity: IdentityService = new IdentityService({
    throttle,
    store: options.store,
    sessions,
    acceptImageUrl,
    now,
    deletionGuard: (tx, environment, userId) => organizations.assertUserDeletable(tx, environment, userId),
  });
  const organizationAccess = new OrganizationAccess(options.store);
  const organizations: OrganizationService = new OrganizationService({
    store: options.store,
    access: organizationAccess,
    acceptImageUrl,
    now,
    identity,
    sessions,
    meCache: meOrganizationsCache,
  });
  const members = new MemberService({ store: options.store, access: organizationAccess, now, identity });
  const roles = new RoleService({ store: options.store, now });
  const verifyAccessToken: AccessTokenVerifier = (token) => sessions.verifyAccessToken(token);
  warmUpPasswordHashing().catch(() => undefined);

  installCors(app);
  await app.register(credentialsPlugin, { tenancy, platformKeyHash: sha256Hex(options.platformKey), verifyAccessToken });
  if (options.rateLimit !== false) {
    const limiter = new RateLimiter({
      clock: options.rateLimit?.clock ?? Date.now,
      redis,
      ...(options.rateLimit?.granularityMs ? { granularityMs: options.rateLimit.granularityMs } : {}),
      ...(options.rateLimit?.redisUsesClock ? { redisUsesClock: true } : {}),
    });
    await app.register(rateLimitPlugin, { limiter });
  }
  const link = redis;
  await app.register(healthRoutes, { store: options.store, redis: link ? () => link.state : undefined });
  await app.register(tenancyRoutes);
  await app.register(platformRoutes, { tenancy, cursors });
  await app.register(assetRoutes, {
    assets,
    authorizeUpload: uploadAuthorizer((environment, session, permission, action) =>
      organizations.assertCurrentPermission(environment, session, permission, action),
    ),
  });
  await app.register(brandingRoutes, { assets });
  await app.register(sessionRoutes, { sessions, keys, tokens, tenancy });
  await app.register(identityRoutes, {
    identity,
    cursors,
    meOrganizations: (environment, session) => organizations.meOrganizations(environment, session),
  });
  await app.register(organizationRoutes, { organizations, sessions, cursors });
  await app.register(memberRoutes, { members, cursors });
  await app.register(roleRoutes, { roles, tenancy });
  await app.register(usageRoutes, { usage, now });
  await app.register(outboxRoutes, { mailbox: new Mailbox(options.store), tenancy });

  const outbox = new OutboxWorker(options.store, options.mail.transport, { log: app.log, ...options.mail.worker });
  app.decorate('outbox', outbox);
  const flows = new FlowService({
    throttle,
    store: options.store,
    identity,
    sessions,
    tenancy,
    now,
    codeKey: deriveSubkey(options.instanceSecret, 'email-codes'),
    wake: () => outbox.wake(),
  });
  await app.register(authFlowRoutes, { flows });
  if (options.mail.startWorker !== false) app.addHook('onReady', async () => outbox.start());
  app.addHook('onClose', async () => {
    await outbox.stop();
    options.mail.transport.close();
  });

  const { startWorker: startWebhookWorker, ...webhookWorkerOptions } = options.webhooks ?? {};
  const webhookService = new WebhookService(options.store, options.instanceSecret, now, () => webhookWorker.wake());
  const webhookWorker: WebhookWorker = new WebhookWorker(
    options.store,
    webhookService,
    async (environmentId) => (await tenancy.getEnvironment(environmentId)).type,
    { log: app.log, ...webhookWorkerOptions },
  );
  app.decorate('webhooks', webhookWorker);
  await app.register(webhookRoutes, { webhooks: webhookService, tenancy, cursors });
  // Events commit with the changes announced here: send them at once rather than at the next poll.
  const unwake = changeFeed(options.store.db).subscribe(() => webhookWorker.wake());
  if (startWebhookWorker !== false) app.addHook('onReady', async () => webhookWorker.start());
  app.addHook('onClose', async () => {
    unwake();
    await webhookWorker.stop();
  });

  app.decorate('tenancy', tenancy);

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  return app;
}
