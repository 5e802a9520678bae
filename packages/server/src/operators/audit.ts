import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Actor, OperatorService } from './service.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Records every change made through the platform API: who (operator or platform key), what, when. */
export const auditPlugin = fp<{ operators: OperatorService }>(
  async (app: FastifyInstance, { operators }) => {
    const record = async (request: FastifyRequest, reply: FastifyReply, auth: { operator?: { userId: string } | undefined }) => {
      try {
        const actor: Actor = auth.operator
          ? { kind: 'operator', id: auth.operator.userId, email: await operators.operatorEmail(auth.operator.userId) }
          : { kind: 'platform_key', id: null, email: null };
        await operators.record(actor, `${request.method} ${request.routeOptions.url}`, request.url.split('?')[0] ?? null, reply.statusCode);
      } catch (error) {
        request.log.error({ err: error }, 'could not record an operator action in the audit log');
      }
    };
    // A callback that settles at once for every other request: no promise per request on every route.
    app.addHook('onResponse', (request, reply, done) => {
      const auth = request.auth;
      if (!auth || auth.kind !== 'platform' || READS.has(request.method) || reply.statusCode >= 400) return done();
      record(request, reply, auth).then(() => done(), done);
    });
  },
  { name: 'gatehouse-operator-audit' },
);
