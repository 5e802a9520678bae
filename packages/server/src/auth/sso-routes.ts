import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SignedIn, SsoStarted } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf } from '../http/credentials.js';
import { acceptFormBodies } from '../http/forms.js';
import { requestContext } from '../http/request-context.js';
import type { SsoFlowService } from '../sso/flow.js';
import type { SsoWay } from './sso.js';
import { secondFactorAnswer, sendSignIn } from './second-factor-routes.js';

const Str = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** POST /v1/auth/sso/start and /verify. */
export const ssoAuthRoutes: FastifyPluginAsyncTypebox<{ flows: Pick<SsoFlowService, 'start'>; sso: SsoWay }> = async (app, { flows, sso }) => {
  acceptFormBodies(app);

  app.post(
    '/v1/auth/sso/start',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'Start single sign-on: routed by the email domain, or a connection id; answers the URL to send the browser to',
        tags: ['auth'],
        body: Type.Object(
          { email: Type.Optional(Type.String({ maxLength: 1024 })), connectionId: Type.Optional(Str(128)), redirectUrl: Str(2048) },
          { additionalProperties: false },
        ),
        response: { 200: SsoStarted },
      },
    },
    async (request) => flows.start(environmentOf(request), request.body),
  );

  app.post(
    '/v1/auth/sso/verify',
    {
      config: { credentials: ['publishable'] },
      schema: { summary: 'Exchange the token SSO returned to redirectUrl for a session', tags: ['auth'], body: Type.Object({ token: Str(512) }, { additionalProperties: false }), response: { 200: SignedIn, ...secondFactorAnswer } },
    },
    async (request, reply) => sendSignIn(reply, await sso.verify(environmentOf(request), request.body.token, requestContext(request))),
  );
};
