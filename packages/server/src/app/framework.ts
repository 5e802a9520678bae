import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { CredentialKind } from '../http/credentials.js';
import { answerClientError, answerFrameworkError, installErrorHandling, MAX_PARAM_LENGTH } from '../http/error-handler.js';
import { installLingeringClose } from '../http/lingering-close.js';
import { addErrorResponses, errorResponseComponents, type DocumentedRoute } from '../http/openapi-errors.js';
import { requestIdGenerator } from '../http/logging.js';
import { installSecurityHeaders, securityHeaders } from '../http/security-headers.js';
import { lazily, validatorCompiler } from '../http/validation.js';
import { ApiError } from '../lib/errors.js';
import type { AppOptions } from './options.js';

export type RegisteredRoute = DocumentedRoute;

export const JSON_BODY_LIMIT = 1024 * 1024;

// A \u0000 escape that is not itself escaped (an odd run of backslashes before it).
const JSON_NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/;

function nulRefused(where: string): ApiError {
  return new ApiError('invalid_request', `${where} contains a NUL character (\\u0000), which no field accepts. Remove it and send again.`);
}

const SECURITY_SCHEME: Record<CredentialKind, string> = {
  publishable: 'publishableKey',
  secret: 'secretKey',
  session: 'accessToken',
  platform: 'platformKey',
};

/**
 * The HTTP framework as every route meets it: JSON only, one error shape and one set of headers for
 * every answer (the framework's own included), and an OpenAPI document built from the routes.
 */
export async function createFramework(options: AppOptions): Promise<FastifyInstance> {
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
    // `reqId` in every log line of a request, and `x-request-id` in its answer (security-headers.ts).
    genReqId: requestIdGenerator(Boolean(options.trustProxy && options.trustProxy.length > 0)),
    // Fastify's own serializers, each built on its first use rather than at start (see validation.ts).
    schemaController: {
      compilersFactory: {
        buildSerializer: (...factoryArguments: Parameters<ReturnType<typeof SerializerSelector>>) => {
          const build = SerializerSelector()(...factoryArguments);
          return (route: Parameters<typeof build>[0]) => lazily(() => build(route));
        },
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  installSecurityHeaders(app, headers);
  installErrorHandling(app, headers);
  installLingeringClose(app);

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
      routes.push({
        method,
        url: route.url,
        credentials: kinds,
        rateLimited: counted,
        hasBody,
        hasParams: route.url.includes(':'),
        errors: route.config?.errors ?? [],
      });
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

  return app;
}
