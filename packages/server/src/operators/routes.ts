import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditLogPage, ConsoleConfig, Operator, OperatorInvitation, OperatorPage } from '@gatehouse/contract';
import { Type } from 'typebox';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import { apiError } from '../lib/errors.js';
import type { OperatorService } from './service.js';

const platform = { credentials: ['platform'] } as const;
const tags = ['platform'];

export const operatorRoutes: FastifyPluginAsyncTypebox<{ operators: OperatorService; cursors: CursorCodec; baseUrl: string }> = async (
  app,
  { operators, cursors, baseUrl },
) => {
  app.get(
    '/v1/console/config',
    {
      schema: {
        summary: "What the console needs before sign-in: the operators' environment and its publishable key (public values)",
        tags: ['console'],
        response: { 200: ConsoleConfig },
      },
    },
    async () => {
      const { environment } = await operators.operatorsEnvironment();
      return { environmentId: environment.id, publishableKey: environment.publishableKey, baseUrl };
    },
  );

  app.post(
    '/v1/console/setup',
    {
      schema: {
        summary: 'Create an operator from a one-time console link: the setup link printed at start, or an invitation',
        description: 'The link works once. The setup link creates the first operator only; an invitation fixes the address.',
        tags: ['console'],
        body: Type.Object(
          {
            token: Type.String({ minLength: 1, maxLength: 200 }),
            email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
            password: Type.String({ minLength: 1, maxLength: 1000 }),
            firstName: Type.Optional(Type.String({ maxLength: 100 })),
            lastName: Type.Optional(Type.String({ maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Operator },
      },
    },
    async (request, reply) => {
      return reply.code(201).send(await operators.setup(request.body));
    },
  );

  app.get(
    '/v1/platform/operators',
    {
      config: platform,
      schema: { summary: 'List operators (users of the console), newest first, a page at a time', tags, querystring: PaginationQuery, response: { 200: OperatorPage } },
    },
    async (request) => {
      const before = request.query.cursor ? cursors.decode<{ operatorsBefore: string }>(request.query.cursor) : undefined;
      if (request.query.cursor && typeof before?.operatorsBefore !== 'string') {
        throw apiError('invalid_request', 'The cursor is not one of this listing. Pass back the nextCursor value of GET /v1/platform/operators.', { fields: ['cursor'] });
      }
      const { operators: data, hasMore } = await operators.list(request.query.limit ?? 20, before?.operatorsBefore);
      const last = data.at(-1);
      return { data, nextCursor: hasMore && last ? cursors.encode({ operatorsBefore: last.id }) : null };
    },
  );

  app.post(
    '/v1/platform/operators/invitations',
    {
      config: { ...platform, errors: ['conflict'] },
      schema: {
        summary: 'Invite an operator by email: a one-time console link, valid 7 days, emailed and returned here',
        tags,
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) }, { additionalProperties: false }),
        response: { 201: OperatorInvitation },
      },
    },
    async (request, reply) => {
      const auth = request.auth!;
      const actorId = auth.kind === 'platform' && auth.operator ? auth.operator.userId : null;
      return reply.code(201).send(await operators.invite({ kind: actorId ? 'operator' : 'platform_key', id: actorId, email: null }, request.body.email));
    },
  );

  app.delete(
    '/v1/platform/operators/:userId',
    {
      config: platform,
      schema: { summary: 'Remove an operator (not the last one)', tags, params: IdParams('userId'), response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await operators.remove(request.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/platform/audit-log',
    {
      config: platform,
      schema: {
        summary: 'What operators and the platform key changed, newest first',
        tags,
        querystring: PaginationQuery,
        response: { 200: AuditLogPage },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 20;
      const before = request.query.cursor ? cursors.decode<{ at: number; id: string }>(request.query.cursor) : undefined;
      const { entries, hasMore } = await operators.auditLog(limit, before);
      const last = entries.at(-1);
      return { data: entries, nextCursor: hasMore && last ? cursors.encode({ at: last.at, id: last.id }) : null };
    },
  );
};
