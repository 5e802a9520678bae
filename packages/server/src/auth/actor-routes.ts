import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ActorTokenRedeemBody, SignedIn } from '@gatehouse/contract';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import type { ActorWay } from './actor.js';

/** POST /v1/auth/actor-token: redeem an actor token for an impersonated session. */
export const actorAuthRoutes: FastifyPluginAsyncTypebox<{ actor: ActorWay }> = async (app, { actor }) => {
  app.post(
    '/v1/auth/actor-token',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'Redeem a one-time actor token for a session as its user, acted by its actor (impersonation)',
        description:
          'Single-use, in the environment that issued it, before it expires (else 401 invalid_credentials). The access token carries ' +
          'act: {sub} and amr ["actor"]; the session lives at most an hour and skips the second factor.',
        tags: ['auth'],
        body: ActorTokenRedeemBody,
        response: { 200: SignedIn },
      },
    },
    async (request) => actor.redeem(environmentOf(request), request.body.token, requestContext(request)),
  );
};
