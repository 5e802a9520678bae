import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Health } from '@gatehouse/contract';
import { sql } from 'kysely';
import type { Store } from '../db/index.js';
import type { RedisState } from '../lib/redis.js';

export interface HealthOptions {
  store: Store;
  /** The Redis link's state; absent when no Redis is configured. */
  redis?: (() => RedisState) | undefined;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { store, redis }) => {
  app.get(
    '/v1/health',
    {
      schema: {
        summary: 'Liveness and dependency health; 503 when the database is unreachable, 200 "degraded" when Redis is',
        tags: ['health'],
        response: { 200: Health, 503: Health },
      },
      // JSON.stringify of the fixed body, not a serializer compiled from the schema: this is the first
      // request a starting node answers (orchestrators wait for it), and the compile cost it ~30 ms.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (request, reply) => {
      const redisState = redis ? redis() : ('disabled' as const);
      try {
        await sql`select 1`.execute(store.db);
        return { status: redisState === 'degraded' ? ('degraded' as const) : ('ok' as const), database: 'ok' as const, redis: redisState };
      } catch (error) {
        request.log.error({ err: error }, 'health check: database unreachable');
        return reply.code(503).send({ status: 'down', database: 'down', redis: redisState });
      }
    },
  );
};
