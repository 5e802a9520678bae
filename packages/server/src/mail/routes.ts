import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CapturedEmailList, OutboxEmailList } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Mailbox } from './mailbox.js';

const EmailQuery = Type.Object(
  {
    to: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

export const outboxRoutes: FastifyPluginAsyncTypebox<{ mailbox: Mailbox; tenancy: TenancyService }> = async (app, { mailbox, tenancy }) => {
  app.get(
    '/v1/dev/emails',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: 'Emails captured in this development environment, newest first (production: 404)',
        tags: ['dev'],
        querystring: EmailQuery,
        response: { 200: CapturedEmailList },
      },
    },
    async (request) => ({
      data: await mailbox.captured(environmentOf(request), { to: request.query.to, limit: request.query.limit ?? 20 }),
    }),
  );

  app.get(
    '/v1/platform/environments/:environmentId/emails',
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: "An environment's outbox with delivery status: captured mail in development, deliveries and failures in production",
        tags: ['platform'],
        params: IdParams('environmentId'),
        querystring: EmailQuery,
        response: { 200: OutboxEmailList },
      },
    },
    async (request) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      return { data: await mailbox.deliveries(environment, { to: request.query.to, limit: request.query.limit ?? 20 }) };
    },
  );
};
