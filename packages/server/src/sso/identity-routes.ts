import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CompleteIdentityLinkParams, LinkIdentityParams, SsoStarted, UserIdentity, UserIdentityList } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { SsoFlowService } from './flow.js';
import type { SsoIdentityService } from './identity-service.js';

const tags = ['me'];

/** GET/POST/DELETE /v1/me/identities (the user), and the same reads and unlinks with a secret key (the console). */
export const userIdentityRoutes: FastifyPluginAsyncTypebox<{ identities: SsoIdentityService; flows: SsoFlowService }> = async (app, { identities, flows }) => {
  app.get(
    '/v1/me/identities',
    { config: { credentials: ['session'] }, schema: { summary: 'The provider accounts linked to the signed-in user', tags, response: { 200: UserIdentityList } } },
    async (request) => {
      const { environment, session } = sessionOf(request);
      return { data: await identities.list(environment, session.userId) };
    },
  );

  app.post(
    '/v1/me/identities',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: 'Start linking a provider to the signed-in user: answers the URL to send the browser to; it returns to redirectUrl with a token (for /v1/me/identities/complete) or error=…',
        tags,
        body: LinkIdentityParams,
        response: { 200: SsoStarted },
      },
    },
    async (request) => {
      const { environment, session } = sessionOf(request);
      return flows.start(environment, { connectionId: request.body.connectionId, redirectUrl: request.body.redirectUrl }, session.userId);
    },
  );

  app.post(
    '/v1/me/identities/complete',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: "Complete a link with the token the provider's return carried; only the session of the user who started it can",
        tags,
        body: CompleteIdentityLinkParams,
        response: { 201: UserIdentity },
      },
    },
    async (request, reply) => {
      const { environment, session } = sessionOf(request);
      return reply.code(201).send(await identities.complete(environment, session.userId, request.body.token));
    },
  );

  app.delete(
    '/v1/me/identities/:identityId',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: 'Unlink a provider from the signed-in user (409 when it is the last way to sign in)',
        tags,
        params: IdParams('identityId'),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const { environment, session } = sessionOf(request);
      await identities.unlink(environment, session.userId, request.params.identityId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/users/:userId/identities',
    {
      config: { credentials: ['secret'] },
      schema: { summary: "A user's linked provider accounts (the console's user page)", tags: ['users'], params: IdParams('userId'), response: { 200: UserIdentityList } },
    },
    async (request) => ({ data: await identities.list(environmentOf(request), request.params.userId) }),
  );

  app.delete(
    '/v1/users/:userId/identities/:identityId',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: "Unlink a provider from a user (409 when it is the user's last way to sign in)",
        tags: ['users'],
        params: IdParams('userId', 'identityId'),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await identities.unlink(environmentOf(request), request.params.userId, request.params.identityId);
      return reply.code(204).send(null);
    },
  );
};
