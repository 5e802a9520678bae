import { Type, type Static } from 'typebox';
import { Page } from './lists.js';
import { define } from './registry.js';

/** The answer of every flow that emails: the same whether or not the address has an account. */
export const EmailSent = define('EmailSent', Type.Object({ status: Type.Literal('sent') }));
export type EmailSent = Static<typeof EmailSent>;

export const PasswordReset = define('PasswordReset', Type.Object({ reset: Type.Literal(true), sessionsRevoked: Type.Integer() }));
export type PasswordReset = Static<typeof PasswordReset>;

/** An email captured in a development environment. */
export const CapturedEmail = define(
  'CapturedEmail',
  Type.Object({
    id: Type.String(),
    to: Type.String(),
    subject: Type.String(),
    text: Type.String(),
    html: Type.String(),
    kind: Type.String(),
    createdAt: Type.Integer(),
  }),
);
export type CapturedEmail = Static<typeof CapturedEmail>;

/** GET /v1/dev/emails: newest first, a page at a time. */
export const CapturedEmailPage = Page('CapturedEmailPage', CapturedEmail);
export type CapturedEmailPage = Static<typeof CapturedEmailPage>;

/** An outbox message with its delivery status, as the platform API shows it. */
export const OutboxEmail = define(
  'OutboxEmail',
  Type.Object({
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
  }),
);
export type OutboxEmail = Static<typeof OutboxEmail>;

/** GET /v1/platform/environments/{environmentId}/emails: newest first, a page at a time. */
export const OutboxEmailPage = Page('OutboxEmailPage', OutboxEmail);
export type OutboxEmailPage = Static<typeof OutboxEmailPage>;
