import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Store } from '../db/index.js';
import { environmentOf } from '../http/credentials.js';
import { ApiError } from '../lib/errors.js';
import { IdParams } from '../http/schemas.js';
import type { TenancyService } from '../tenancy/service.js';
import { emailKeyOf } from '../identity/email.js';
import { listEmails } from './outbox.js';

type OutboxRow = Awaited<ReturnType<typeof listEmails>>[number];

const CapturedEmail = Type.Object({
  id: Type.String(),
  to: Type.String(),
  subject: Type.String(),
  text: Type.String(),
  html: Type.String(),
  kind: Type.String(),
  createdAt: Type.Integer(),
});

const OutboxEmail = Type.Object({
  ...CapturedEmail.properties,
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('sent'),
    Type.Literal('failed'),
    Type.Literal('captured'),
    Type.Literal('suppressed'),
  ]),
  attempts: Type.Integer(),
  lastError: Type.Union([Type.String(), Type.Null()]),
  sentAt: Type.Union([Type.Integer(), Type.Null()]),
});

const EmailQuery = Type.Object(
  {
    to: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

function capturedView(row: OutboxRow) {
  return {
    id: row.id,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    kind: row.kind,
    createdAt: row.created_at,
  };
}

/** The `to` filter matches the address in any case, like every other look-up by address. */
function recipientFilter(to: string | undefined): string | undefined {
  return to === undefined ? undefined : emailKeyOf(to);
}

export const outboxRoutes: FastifyPluginAsyncTypebox<{ store: Store; tenancy: TenancyService }> = async (app, { store, tenancy }) => {
  app.get(
    '/v1/dev/emails',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: 'Emails captured in this development environment, newest first (production: 404)',
        tags: ['dev'],
        querystring: EmailQuery,
        response: { 200: Type.Object({ data: Type.Array(CapturedEmail) }) },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      if (environment.type !== 'development') {
        throw new ApiError(
          'not_found',
          "The email outbox exists only in development environments: production email is delivered, not captured. Use the development environment's secret key.",
        );
      }
      const rows = await listEmails(store.db, environment.id, {
        toKey: recipientFilter(request.query.to),
        statuses: ['captured'],
        limit: request.query.limit ?? 20,
      });
      return { data: rows.map(capturedView) };
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
        response: { 200: Type.Object({ data: Type.Array(OutboxEmail) }) },
      },
    },
    async (request) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      const rows = await listEmails(store.db, environment.id, { toKey: recipientFilter(request.query.to), limit: request.query.limit ?? 20 });
      return {
        data: rows.map((r) => ({
          ...capturedView(r),
          // Production bodies hold live one-time secrets until sent; operators see the delivery, not the secret.
          ...(environment.type === 'production' ? { text: '', html: '' } : {}),
          status: r.status,
          attempts: r.attempts,
          lastError: r.last_error,
          sentAt: r.sent_at,
        })),
      };
    },
  );
};
