import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../src/lib/errors.js';

/** A route behind PK or SK whose handler fails on demand, to see headers on errors raised after the limiter. */
export function probeRoutes(app: FastifyInstance): void {
  app.post(
    '/v1/test/probe',
    {
      config: { credentials: ['publishable', 'secret'] },
      schema: {
        body: Type.Object({ outcome: Type.Union([Type.Literal('ok'), Type.Literal('missing')]) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      if ((request.body as { outcome: string }).outcome === 'missing') throw notFound('The probe');
      return { ok: true };
    },
  );
}

/** Like GET /v1/jwks: credentialed, but not counted. */
export function uncountedRoute(app: FastifyInstance): void {
  app.get('/v1/test/uncounted', { config: { credentials: ['publishable', 'secret'], rateLimit: false } }, async () => ({ ok: true }));
}
