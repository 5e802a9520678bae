import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AttemptBody,
  PasskeyOptionsAnswer,
  SecondFactorBody,
  SecondFactorNeeded,
  SecondFactorSignedIn,
  TotpSetup,
} from '@gatehouse/contract';
import type { FastifyReply } from 'fastify';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import type { SecondFactorStep } from './second-factor.js';

const publishable = { credentials: ['publishable'] } as const;

/** The door's answer on the wire: 202 when a second factor comes first, else `status` (200, or 201 for a sign-up). */
export function sendSignIn<T extends object>(reply: FastifyReply, result: T | SecondFactorNeeded, status = 200) {
  return reply.code('status' in result && 'attemptId' in result ? 202 : status).send(result);
}

/** A way in's `202` answer, for its route's schema. */
export const secondFactorAnswer = { 202: SecondFactorNeeded } as const;

/** POST /v1/auth/signin/second-factor, …/totp-setup and …/passkey-setup. */
export const secondFactorRoutes: FastifyPluginAsyncTypebox<{ step: SecondFactorStep }> = async (app, { step }) => {
  app.post(
    '/v1/auth/signin/second-factor',
    {
      config: publishable,
      schema: {
        summary: 'Complete a sign-in that answered 202 needs_second_factor (or needs_second_factor_setup) with the second factor',
        description:
          'An attempt lives 10 minutes, belongs to its environment, is single-use, and dies after 5 wrong codes (then start the sign-in again). A wrong code is 401 invalid_credentials; past 10 wrong codes per user in 15 minutes every try is 429 rate_limited. On a setup attempt the TOTP code enables TOTP and the answer carries the backup codes, shown once. factor "passkey" takes `response`: the assertion to POST /v1/auth/passkey/options {attemptId} (a wrong one counts as a wrong try), or on a setup attempt the registration to …/passkey-setup (the passkey is registered; no backup codes). On a setup attempt whose user has set up a second factor since it began: 409 conflict, nothing enrolled.',
        tags: ['auth'],
        body: SecondFactorBody,
        response: { 200: SecondFactorSignedIn },
      },
    },
    async (request) => step.complete(environmentOf(request), request.body, requestContext(request)),
  );

  app.post(
    '/v1/auth/signin/second-factor/totp-setup',
    {
      config: publishable,
      schema: {
        summary:
          'Inside a needs_second_factor_setup attempt: a new TOTP secret to scan (confirm it with POST /v1/auth/signin/second-factor)',
        description:
          'Any other attempt is refused with 400 invalid_request: a first factor alone never enrols a second one. 409 conflict when the user has set up a second factor since the attempt began (start the sign-in again).',
        tags: ['auth'],
        body: AttemptBody,
        response: { 200: TotpSetup },
      },
    },
    async (request) => step.totpSetup(environmentOf(request), request.body.attemptId),
  );

  app.post(
    '/v1/auth/signin/second-factor/passkey-setup',
    {
      config: publishable,
      schema: {
        summary:
          'Inside a needs_second_factor_setup attempt: options for navigator.credentials.create() (send its answer to POST /v1/auth/signin/second-factor with factor "passkey")',
        description:
          'The options are those of POST /v1/me/passkeys/registration, bound to the attempt (a new call voids the previous challenge). Any other attempt is refused with 400 invalid_request: a first factor alone never enrols a second one. 409 conflict when the user has set up a second factor since the attempt began (start the sign-in again).',
        tags: ['auth'],
        body: AttemptBody,
        response: { 200: PasskeyOptionsAnswer },
      },
    },
    async (request) => step.passkeySetup(environmentOf(request), request.body.attemptId, request.headers.origin),
  );
};
