import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Actor, OperatorService } from './service.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Records every change made through the platform API: who (operator or platform key), what, when. */
export const auditPlugin = fp<{ operators: OperatorService }>(
  async (app: FastifyInstance, { operators }) => {
    app.addHook('onResponse', async (request, reply) => {
      const auth = request.auth;
      if (!auth || auth.kind !== 'platform' || READS.has(request.method) || reply.statusCode >= 400) return;
      try {
        const actor: Actor = auth.operator
          ? { kind: 'operator', id: auth.operator.userId, email: await operators.operatorEmail(auth.operator.userId) }
          : { kind: 'platform_key', id: null, email: null };
        await operators.record(actor, `${request.method} ${request.routeOptions.url}`, request.url.split('?')[0] ?? null, reply.statusCode);
      } catch (error) {
        request.log.error({ err: error }, 'could not record an operator action in the audit log');
      }
    });
  },
  { name: 'gatehouse-operator-audit' },
);
