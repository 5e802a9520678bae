import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PasskeySignInBody, PasskeySignInOptions, PasskeySignInOptionsBody, SignedIn } from '@gatehouse/contract';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import type { PasskeyWay } from './passkey.js';

const publishable = { credentials: ['publishable'] } as const;

/** POST /v1/auth/passkey/options and /verify (docs/passkeys.md). */
export const passkeyAuthRoutes: FastifyPluginAsyncTypebox<{ passkey: PasskeyWay }> = async (app, { passkey }) => {
  app.post(
    '/v1/auth/passkey/options',
    {
      config: publishable,
      schema: {
        summary:
          'Start a passkey sign-in: a challenge (discoverable: no allowCredentials) bound to a new attempt; with the attemptId of a second-factor attempt, for that user\'s passkeys',
        description:
          'The challenge lives 5 minutes and serves one verify. A discoverable attempt id (pka_…) carries its challenge under a MAC, so this call stores nothing. The RP ID is the environment\'s domain, or "localhost" for a development page on http://localhost:<port>. 403 method_disabled while authMethods.passkey is off.',
        tags: ['auth'],
        body: PasskeySignInOptionsBody,
        response: { 200: PasskeySignInOptions },
      },
    },
    async (request) => passkey.start(environmentOf(request), request.headers.origin, request.body.attemptId),
  );

  app.post(
    '/v1/auth/passkey/verify',
    {
      config: publishable,
      schema: {
        summary: 'Finish a passkey sign-in with the authenticator\'s assertion: signs in (the passkey satisfies MFA by itself)',
        description:
          'Any verify, right or wrong, spends the attempt\'s challenge; a made-up, altered, expired or foreign attempt id is 401 invalid_credentials. An unknown credential, a wrong origin, RP ID, challenge or user handle, missing user verification and a counter that does not grow are 401 invalid_credentials.',
        tags: ['auth'],
        body: PasskeySignInBody,
        response: { 200: SignedIn },
      },
    },
    async (request) => passkey.verify(environmentOf(request), request.body, requestContext(request)),
  );
};
