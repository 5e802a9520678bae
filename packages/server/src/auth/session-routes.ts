import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionRefreshed } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import { Id } from '../organizations/schemas.js';
import type { OrganizationService } from '../organizations/service.js';
import type { SessionService } from '../sessions/service.js';

const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });

const publishable = { credentials: ['publishable'] } as const;

/** POST /v1/auth/refresh and /signout: a session that passed the door lives on, or ends. */
export const sessionAuthRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionService }> = async (app, { sessions }) => {
  app.post(
    '/v1/auth/refresh',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'Exchange a refresh token for a new access token and a new refresh token',
        description:
          'The refresh token rotates on every use. Presenting a rotated token again within 10 s returns the same successor; later, it revokes the session (401 session_revoked).',
        tags: ['auth'],
        body: RefreshBody,
        response: { 200: SessionRefreshed },
      },
    },
    async (request) => ({
      session: await sessions.refresh(environmentOf(request), request.body.refreshToken, requestContext(request)),
    }),
  );

  app.post(
    '/v1/auth/signout',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'Sign out: revoke the session of a refresh token',
        tags: ['auth'],
        body: RefreshBody,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await sessions.signOut(environmentOf(request), request.body.refreshToken);
      return reply.code(204).send(null);
    },
  );
};

/** POST /v1/auth/switch-organization: a refresh that changes the organization the session acts as. */
export const switchOrganizationRoutes: FastifyPluginAsyncTypebox<{
  sessions: SessionService;
  organizations: Pick<OrganizationService, 'authorizeSwitch'>;
}> = async (app, { sessions, organizations }) => {
  app.post(
    '/v1/auth/switch-organization',
    {
      config: publishable,
      schema: {
        summary: 'Make the session act as an organization (or none), and get new tokens that say so',
        description:
          'Rotates the refresh token like POST /v1/auth/refresh. The caller must be a member of the organization; null switches to no organization. The choice persists across refreshes.',
        tags: ['auth'],
        body: Type.Object(
          { refreshToken: Type.String({ minLength: 1, maxLength: 512 }), organizationId: Type.Union([Id, Type.Null()]) },
          { additionalProperties: false },
        ),
        response: { 200: SessionRefreshed },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      const { refreshToken, organizationId } = request.body;
      const tokens = await sessions.refresh(environment, refreshToken, requestContext(request), {
        organizationId,
        authorize: (tx, userId, factors) =>
          organizations.authorizeSwitch(tx, environment, userId, organizationId, factors.second_factor_at !== null),
      });
      return { session: tokens };
    },
  );
};
