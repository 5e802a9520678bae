import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AcceptInvitationBody, InvitationAccepted, InvitationPreview, InvitationPreviewBody } from '@gatehouse/contract';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import type { InvitationWay } from './invitation.js';
import { secondFactorAnswer, sendSignIn } from './second-factor-routes.js';

const publishable = { credentials: ['publishable'] } as const;
const tags = ['invitations'];

/** POST /v1/auth/invitations/accept and /preview: an emailed invitation's token. */
export const invitationAuthRoutes: FastifyPluginAsyncTypebox<{ invitation: InvitationWay }> = async (app, { invitation }) => {
  app.post(
    '/v1/auth/invitations/accept',
    {
      config: publishable,
      schema: {
        summary: 'Accept an invitation with the token of its emailed link: signs in, or creates the account (even when sign-up is off)',
        tags,
        body: AcceptInvitationBody,
        response: { 200: InvitationAccepted, ...secondFactorAnswer },
      },
    },
    async (request, reply) => sendSignIn(reply, await invitation.accept(environmentOf(request), request.body, requestContext(request))),
  );

  app.post(
    '/v1/auth/invitations/preview',
    {
      config: publishable,
      schema: {
        summary: "Read an invitation by the token of its emailed link before accepting: the organization's name and image, the invited address masked",
        description: 'Changes nothing. An unknown token is 401 invalid_credentials, and an invitation no longer pending is refused as accepting it would be.',
        tags,
        body: InvitationPreviewBody,
        response: { 200: InvitationPreview },
      },
    },
    async (request) => invitation.preview(environmentOf(request), request.body.token),
  );
};
