import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ActorToken, CreateActorTokenBody } from '@gatehouse/contract';
import type { FastifyRequest } from 'fastify';
import { environmentOf } from '../http/credentials.js';
import type { ImpersonationService, Minter } from './service.js';

/** Who is minting: the secret key, or (the platform's copy, the console's) an operator or the platform key. */
function minterOf(request: FastifyRequest): Minter {
  const auth = request.auth;
  if (auth?.kind === 'secret') return { kind: 'secret_key', id: auth.secretKeyId };
  if (auth?.kind === 'platform' && auth.operator) return { kind: 'operator', id: auth.operator.userId };
  return { kind: 'platform_key' };
}

/**
 * POST /v1/actor-tokens (secret key). Its platform copy, POST
 * /v1/platform/environments/{id}/actor-tokens, comes from operators/mirror.ts.
 */
export const impersonationRoutes: FastifyPluginAsyncTypebox<{ impersonation: ImpersonationService }> = async (app, { impersonation }) => {
  app.post(
    '/v1/actor-tokens',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: 'Create a one-time actor token to sign in as a user (impersonation); the token is shown in this answer only',
        description:
          'expiresInSeconds (default 600, at most 3600) bounds when it can be redeemed; the session it starts lives at most an hour, ' +
          'carries act: {sub} and may not change credentials, second factors, passkeys or API keys, nor delete the account. ' +
          'An operator (the console) always acts as themself. 404 for an unknown user; 403 forbidden for a banned user.',
        tags: ['impersonation'],
        body: CreateActorTokenBody,
        response: { 201: ActorToken },
      },
    },
    async (request, reply) => reply.code(201).send(await impersonation.create(environmentOf(request), request.body, minterOf(request))),
  );
};
