import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../src/http/errors.js';

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
