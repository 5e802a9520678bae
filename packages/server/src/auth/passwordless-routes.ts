import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmailSent, PasswordReset, SignedIn } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import { Password } from '../identity/fields.js';
import type { PasswordResetFlow } from './password-reset.js';
import type { PasswordlessWay } from './passwordless.js';
import { secondFactorAnswer, sendSignIn } from './second-factor-routes.js';

const publishable = { credentials: ['publishable'] } as const;
const tags = ['auth'];
const Email = Type.String({ maxLength: 1024 });
const RedirectUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where the emailed link leads; `token` is added as a query parameter. Must pass the origin lock.',
});
const Token = Type.String({ minLength: 1, maxLength: 512 });
const IDENTICAL =
  'Answers 202 {status:"sent"} whether or not the address has an account, and may be called repeatedly; at most 5 emails per address per 10 minutes are actually sent.';

function body<T extends Parameters<typeof Type.Object>[0]>(properties: T) {
  return Type.Object(properties, { additionalProperties: false });
}

/** The emailed flows: magic links, email codes and password resets. */
export const authFlowRoutes: FastifyPluginAsyncTypebox<{ passwordless: PasswordlessWay; reset: PasswordResetFlow }> = async (
  app,
  { passwordless, reset },
) => {
  app.post(
    '/v1/auth/magic-link',
    {
      config: publishable,
      schema: {
        summary: 'Email a one-time sign-in link',
        description: IDENTICAL,
        tags,
        body: body({ email: Email, redirectUrl: RedirectUrl }),
        response: { 202: EmailSent },
      },
    },
    async (request, reply) => {
      await passwordless.startMagicLink(environmentOf(request), request.body);
      return reply.code(202).send({ status: 'sent' });
    },
  );

  app.post(
    '/v1/auth/magic-link/verify',
    {
      config: publishable,
      schema: {
        summary: 'Exchange a magic-link token for a session (creates the account on a sign-up link)',
        tags,
        body: body({ token: Token }),
        response: { 200: SignedIn, ...secondFactorAnswer },
      },
    },
    async (request, reply) =>
      sendSignIn(reply, await passwordless.verifyMagicLink(environmentOf(request), request.body.token, requestContext(request))),
  );

  app.post(
    '/v1/auth/email-code',
    {
      config: publishable,
      schema: {
        summary: 'Email a 6-digit sign-in code',
        description: IDENTICAL,
        tags,
        body: body({ email: Email }),
        response: { 202: EmailSent },
      },
    },
    async (request, reply) => {
      await passwordless.startEmailCode(environmentOf(request), request.body);
      return reply.code(202).send({ status: 'sent' });
    },
  );

  app.post(
    '/v1/auth/email-code/verify',
    {
      config: publishable,
      schema: {
        summary: 'Exchange an email code for a session; five wrong tries void the code',
        description:
          'Repeated failures from one client address are refused for a while with 429 rate_limited and Retry-After. After many wrong codes for one address, each new code accepts a single try.',
        tags,
        body: body({ email: Email, code: Type.String({ pattern: '^[0-9]{6}$', description: 'The 6 digits from the email' }) }),
        response: { 200: SignedIn, ...secondFactorAnswer },
      },
    },
    async (request, reply) =>
      sendSignIn(reply, await passwordless.verifyEmailCode(environmentOf(request), request.body, requestContext(request), request.ip)),
  );

  app.post(
    '/v1/auth/password-reset',
    {
      config: publishable,
      schema: {
        summary: 'Email a one-time password-reset link',
        description: IDENTICAL,
        tags,
        body: body({ email: Email, redirectUrl: RedirectUrl }),
        response: { 202: EmailSent },
      },
    },
    async (request, reply) => {
      await reset.start(environmentOf(request), request.body);
      return reply.code(202).send({ status: 'sent' });
    },
  );

  app.post(
    '/v1/auth/password-reset/complete',
    {
      config: publishable,
      schema: {
        summary: 'Set a new password with a reset token; revokes every session of the user',
        description: 'Repeated invalid tokens from one client address are refused for a while with 429 rate_limited and Retry-After.',
        tags,
        body: body({ token: Token, newPassword: Password }),
        response: { 200: PasswordReset },
      },
    },
    async (request) => reset.complete(environmentOf(request), request.body, request.ip),
  );
};
