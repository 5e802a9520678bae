import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import type { Store } from './db/index.js';
import { credentialsPlugin, type AccessTokenVerifier, type CredentialKind } from './http/credentials.js';
import { ApiError } from './http/errors.js';
import { installErrorHandling } from './http/error-handler.js';
import { healthRoutes } from './http/health.js';
import { identityRoutes } from './identity/routes.js';
import { IdentityService } from './identity/service.js';
import { warmUpPasswordHashing } from './identity/passwords.js';
import { validatorCompiler } from './http/validation.js';
import { CursorCodec, deriveSubkey } from './lib/cursor.js';
import { sha256Hex } from './lib/crypto.js';
import { organizationRoutes } from './organizations/routes.js';
import { OrganizationService } from './organizations/service.js';
import { platformRoutes } from './platform/routes.js';
import { RefreshTokens } from './sessions/refresh-token.js';
import { sessionRoutes } from './sessions/routes.js';
import { SessionService } from './sessions/service.js';
import { SigningKeys } from './sessions/signing-keys.js';
import { AccessTokens } from './sessions/tokens.js';
import { tenancyRoutes } from './tenancy/routes.js';
import { TenancyService } from './tenancy/service.js';
import { usageRoutes } from './usage/routes.js';
import { UsageService } from './usage/service.js';

export interface AppOptions {
  config: Pick<Config, 'baseUrl'>;
  store: Store;
  platformKey: string;
  instanceSecret: string;
  logger?: FastifyServerOptions['logger'];
  /** The clock of time-dependent rules (token expiry, refresh grace, session lifetime); tests inject one. */
  now?: () => number;
}

export const JSON_BODY_LIMIT = 1024 * 1024;

const SECURITY_SCHEME: Record<CredentialKind, string> = {
  publishable: 'publishableKey',
  secret: 'secretKey',
  session: 'accessToken',
  platform: 'platformKey',
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: JSON_BODY_LIMIT,
    exposeHeadRoutes: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app);

  // An empty body with a JSON content type is treated as no body, so body-less POSTs work from
  // clients that always set the header; routes that need a body still refuse it by schema.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(
        new ApiError('invalid_request', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.'),
        undefined,
      );
    }
  });

  // Each route's security requirement in the OpenAPI document comes from its credential config.
  app.addHook('onRoute', (route) => {
    const kinds = route.config?.credentials;
    route.schema = { ...route.schema, security: kinds ? kinds.map((k) => ({ [SECURITY_SCHEME[k]]: [] })) : [] };
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
      },
    },
  });

  const tenancy = new TenancyService(options.store);
  const cursors = new CursorCodec(deriveSubkey(options.instanceSecret, 'cursor'));
  const now = options.now ?? Date.now;
  const usage = new UsageService(options.store, tenancy, now);
  const keys = new SigningKeys(options.store, options.instanceSecret, now);
  const tokens = new AccessTokens(keys, options.config.baseUrl, now);
  const organizations = new OrganizationService({ store: options.store, baseUrl: options.config.baseUrl, now });
  const sessions = new SessionService({
    store: options.store,
    tokens,
    refreshTokens: new RefreshTokens(options.instanceSecret),
    usage,
    now,
    extraClaims: (context) => organizations.claimsFor(context),
  });
  const identity = new IdentityService({
    store: options.store,
    sessions,
    baseUrl: options.config.baseUrl,
    now,
    deletionGuard: (environment, userId) => organizations.assertUserDeletable(environment, userId),
  });
  const verifyAccessToken: AccessTokenVerifier = (token) => sessions.verifyAccessToken(token);
  void warmUpPasswordHashing();

  await app.register(credentialsPlugin, { tenancy, platformKeyHash: sha256Hex(options.platformKey), verifyAccessToken });
  await app.register(healthRoutes, { store: options.store });
  await app.register(tenancyRoutes);
  await app.register(platformRoutes, { tenancy, cursors });
  await app.register(sessionRoutes, { sessions, keys, tokens, tenancy });
  await app.register(identityRoutes, {
    identity,
    cursors,
    meOrganizations: (environment, session) => organizations.meOrganizations(environment, session),
  });
  await app.register(organizationRoutes, { organizations, sessions, tenancy, cursors });
  await app.register(usageRoutes, { usage, now });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  return app;
}
