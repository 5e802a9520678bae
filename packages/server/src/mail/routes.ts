import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CapturedEmailPage, OutboxEmailPage } from '@gatehouse/contract';
import { Type, type Static } from 'typebox';
import { environmentOf } from '../http/credentials.js';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import { apiError } from '../lib/errors.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Mailbox } from './mailbox.js';

const EmailQuery = Type.Object(
  {
    to: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
    ...PaginationQuery.properties,
  },
  { additionalProperties: false },
);

type EmailQuery = Static<typeof EmailQuery>;

export const outboxRoutes: FastifyPluginAsyncTypebox<{ mailbox: Mailbox; tenancy: TenancyService; cursors: CursorCodec }> = async (
  app,
  { mailbox, tenancy, cursors },
) => {
  /** The listing's query as the mailbox takes it: a cursor holds its environment and the last id shown. */
  const pageOf = (environmentId: string, { to, limit = 20, cursor }: EmailQuery) => {
    const before = cursor ? cursors.decode<{ emailsOf: string; before: string }>(cursor) : undefined;
    if (before && before.emailsOf !== environmentId) {
      throw apiError('invalid_request', 'The cursor belongs to another environment. Pass back the nextCursor value of this listing.', {
        fields: ['cursor'],
      });
    }
    return { to, limit, beforeId: before?.before };
  };
  const answer = <T extends { id: string }>(environmentId: string, { emails, hasMore }: { emails: T[]; hasMore: boolean }) => {
    const last = emails.at(-1);
    return { data: emails, nextCursor: hasMore && last ? cursors.encode({ emailsOf: environmentId, before: last.id }) : null };
  };

  app.get(
    '/v1/dev/emails',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: 'Emails captured in this development environment, newest first (production: 404)',
        tags: ['dev'],
        querystring: EmailQuery,
        response: { 200: CapturedEmailPage },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      return answer(environment.id, await mailbox.captured(environment, pageOf(environment.id, request.query)));
    },
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
        response: { 200: OutboxEmailPage },
      },
    },
    async (request) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      return answer(environment.id, await mailbox.deliveries(environment, pageOf(environment.id, request.query)));
    },
  );
};
