import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HandoffRedirect, SignedIn } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import type { HandoffWay } from './handoff.js';

const Token = Type.String({ minLength: 1, maxLength: 512 });

/** POST /v1/me/handoff (a hosted page's session mints a token) and /v1/auth/handoff (the application redeems it). */
export const handoffRoutes: FastifyPluginAsyncTypebox<{ handoff: HandoffWay }> = async (app, { handoff }) => {
  app.post(
    '/v1/auth/handoff',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'Exchange a hosted page\'s one-time handoff token (#__gh_handoff=) for a session',
        description: 'The token is single-use, valid 60 s, and only in the environment whose hosted page issued it.',
        tags: ['auth'],
        body: Type.Object({ token: Token }, { additionalProperties: false }),
        response: { 200: SignedIn },
      },
    },
    async (request) => handoff.exchange(environmentOf(request), request.body.token, requestContext(request)),
  );

  app.post(
    '/v1/me/handoff',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: 'A hosted page hands the signed-in user to redirectUrl (origin lock) with a one-time token',
        tags: ['me'],
        body: Type.Object({ redirectUrl: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false }),
        response: { 200: HandoffRedirect },
      },
    },
    async (request) => {
      const { environment, session } = sessionOf(request);
      return handoff.create(environment, session, request.body.redirectUrl);
    },
  );
};
