import type { FastifyInstance, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';

/**
 * The console is a browser, and secret keys never come from one. So each secret-key route
 * (`/v1/users…`, `/v1/organizations…`, `/v1/dev/…`) also answers at
 * `/v1/platform/environments/{environmentId}/…` for the platform's credentials, running the same
 * handler in the named environment. Call before the routes are registered; register the copies
 * with the returned function once they all are.
 */
export function mirrorSecretKeyRoutes(app: FastifyInstance): () => void {
  const captured: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    const kinds = route.config?.credentials;
    if (kinds?.length === 1 && kinds[0] === 'secret' && route.url.startsWith('/v1/') && !route.config?.actsInEnvironment) {
      captured.push({ ...route });
    }
  });
  return () => {
    for (const route of captured) {
      const schema = (route.schema ?? {}) as Record<string, unknown> & { params?: { properties?: Record<string, TSchema> }; summary?: string };
      const params = Type.Object(
        { environmentId: Type.String({ minLength: 1, maxLength: 128 }), ...(schema.params?.properties ?? {}) },
        { additionalProperties: false },
      );
      const { security: _security, ...rest } = schema;
      app.route({
        method: route.method,
        url: `/v1/platform/environments/:environmentId${route.url.slice('/v1'.length)}`,
        handler: route.handler,
        // A route's own body limit (the 16 MiB of /v1/users/import) holds on its copy too.
        ...(route.bodyLimit !== undefined ? { bodyLimit: route.bodyLimit } : {}),
        config: { ...route.config, credentials: ['platform'], actsInEnvironment: true },
        schema: {
          ...rest,
          params,
          tags: ['platform'],
          ...(schema.summary ? { summary: `${schema.summary} (the platform's copy of ${route.url}, in the environment named)` } : {}),
        },
      });
    }
  };
}
