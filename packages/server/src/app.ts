import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { assetRoutes, brandingRoutes, refuseOrganizationImages, type UploadAuthorizer } from './assets/routes.js';
import type { ObjectStore } from './assets/object-store.js';
import { AssetService } from './assets/service.js';
import type { Config } from './config.js';
import type { Store } from './db/index.js';
import { credentialsPlugin, type AccessTokenVerifier, type CredentialKind } from './http/credentials.js';
import { ApiError } from './http/errors.js';
import { installErrorHandling } from './http/error-handler.js';
import { healthRoutes } from './http/health.js';
import { validatorCompiler } from './http/validation.js';
import { CursorCodec, deriveSubkey } from './lib/cursor.js';
import { sha256Hex } from './lib/crypto.js';
import { platformRoutes } from './platform/routes.js';
import { tenancyRoutes } from './tenancy/routes.js';
import { TenancyService } from './tenancy/service.js';

export interface AppOptions {
  config: Pick<Config, 'baseUrl'>;
  store: Store;
  platformKey: string;
  instanceSecret: string;
  /** Where images live: openObjectStore(config, instanceSecret) in production. */
  objectStore: ObjectStore;
  /**
   * Who may request an upload ticket for which purpose. The default refuses organization images;
   * the Organizations issue replaces it with the live-membership org:manage check.
   */
  authorizeUpload?: UploadAuthorizer;
  logger?: FastifyServerOptions['logger'];
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
  const verifyAccessToken: AccessTokenVerifier = async () => {
    throw new ApiError('unauthenticated', 'Access tokens are not accepted by this build.');
  };

  await app.register(credentialsPlugin, { tenancy, platformKeyHash: sha256Hex(options.platformKey), verifyAccessToken });
  await app.register(healthRoutes, { store: options.store });
  await app.register(tenancyRoutes);
  await app.register(platformRoutes, { tenancy, cursors });
  const assets = new AssetService(options.store, options.objectStore);
  await app.register(assetRoutes, { assets, authorizeUpload: options.authorizeUpload ?? refuseOrganizationImages });
  await app.register(brandingRoutes, { assets });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  return app;
}
