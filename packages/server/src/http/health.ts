import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Store } from '../db/index.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]);

export const healthRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    '/v1/health',
    {
      schema: {
        summary: 'Liveness and dependency health; 503 when the database is unreachable',
        tags: ['health'],
        response: {
          200: Type.Object({ status: Check, database: Check }),
          503: Type.Object({ status: Check, database: Check }),
        },
      },
    },
    async (request, reply) => {
      try {
        await sql`select 1`.execute(store.db);
        return { status: 'ok' as const, database: 'ok' as const };
      } catch (error) {
        request.log.error({ err: error }, 'health check: database unreachable');
        return reply.code(503).send({ status: 'down', database: 'down' });
      }
    },
  );
};
