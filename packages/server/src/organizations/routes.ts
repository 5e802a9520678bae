import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateOrganizationBody,
  CreateUserOrganizationBody,
  Deleted,
  Organization,
  OrganizationPage,
  UpdateCurrentOrganizationBody,
  UpdateOrganizationBody,
  UserOrganization,
  UserOrganizationPage,
} from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import { type Actor, foreignCursor } from './access.js';
import { secondFactorRequired } from './access.js';
import type { SessionService } from '../sessions/service.js';
import type { OrganizationService } from './service.js';

/** Organizations themselves (secret key and session). */
export interface OrganizationRouteOptions {
  organizations: OrganizationService;
  /** The session's live factors: only a session that verified a second factor may require MFA. */
  sessions: Pick<SessionService, 'lastVerification'>;
  cursors: CursorCodec;
}

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const backend: Actor = { kind: 'backend' };

export const organizationRoutes: FastifyPluginAsyncTypebox<OrganizationRouteOptions> = async (app, options) => {
  const { organizations, sessions, cursors } = options;

  // ---- /v1/organizations (secret key)

  app.post(
    '/v1/organizations',
    {
      config: secret,
      schema: {
        summary: 'Create an organization; ownerId becomes its first owner',
        tags: ['organizations'],
        body: CreateOrganizationBody,
        response: { 201: Organization },
      },
    },
    async (request, reply) => reply.code(201).send(await organizations.createOrganization(environmentOf(request), request.body)),
  );

  app.get(
    '/v1/organizations',
    {
      config: secret,
      schema: {
        summary: 'List organizations, newest first',
        tags: ['organizations'],
        querystring: Type.Object(
          {
            ...PaginationQuery.properties,
            query: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive text in the name or slug' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: OrganizationPage },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      const { limit = 20, cursor, query } = request.query;
      const before = cursor ? cursors.decode<{ env: string; before: string }>(cursor) : undefined;
      if (before && (before.env !== environment.id || typeof before.before !== 'string')) foreignCursor();
      const result = await organizations.listOrganizations(environment, { limit, beforeId: before?.before, query });
      const last = result.organizations.at(-1);
      return {
        data: result.organizations,
        nextCursor: result.hasMore && last ? cursors.encode({ env: environment.id, before: last.id }) : null,
      };
    },
  );

  app.get(
    '/v1/organizations/:organizationId',
    {
      config: secret,
      schema: {
        summary: 'Read an organization',
        tags: ['organizations'],
        params: IdParams('organizationId'),
        response: { 200: Organization },
      },
    },
    async (request) => organizations.getOrganization(environmentOf(request), request.params.organizationId),
  );

  app.patch(
    '/v1/organizations/:organizationId',
    {
      config: secret,
      schema: {
        summary: 'Change an organization; omitted fields are unchanged, null removes the image',
        tags: ['organizations'],
        params: IdParams('organizationId'),
        body: UpdateOrganizationBody,
        response: { 200: Organization },
      },
    },
    async (request) => organizations.updateOrganization(environmentOf(request), request.params.organizationId, request.body),
  );

  app.delete(
    '/v1/organizations/:organizationId',
    {
      config: secret,
      schema: {
        summary: 'Delete an organization and all its memberships',
        tags: ['organizations'],
        params: IdParams('organizationId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await organizations.deleteOrganization(environmentOf(request), backend, request.params.organizationId);
      return { id: request.params.organizationId, deleted: true as const };
    },
  );

  // ---- /v1/me/organizations and /v1/me/organization (session)

  app.get(
    '/v1/me/organizations',
    {
      config: session,
      schema: {
        summary: "The signed-in user's organizations, with their role in each",
        tags: ['me'],
        querystring: PaginationQuery,
        response: { 200: UserOrganizationPage },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const { limit = 20, cursor } = request.query;
      let after: { joinedAt: number; organizationId: string } | undefined;
      if (cursor !== undefined) {
        const c = cursors.decode<{ env: string; user: string; j: number; o: string }>(cursor);
        if (c.env !== environment.id || c.user !== current.userId) foreignCursor();
        after = { joinedAt: c.j, organizationId: c.o };
      }
      const result = await organizations.listUserOrganizations(environment, current.userId, { limit, after });
      const last = result.organizations.at(-1);
      return {
        data: result.organizations,
        nextCursor:
          result.hasMore && last ? cursors.encode({ env: environment.id, user: current.userId, j: last.joinedAt, o: last.id }) : null,
      };
    },
  );

  app.post(
    '/v1/me/organizations',
    {
      config: session,
      schema: {
        summary: 'Create an organization; the signed-in user becomes its owner',
        description: 'Does not switch the session to it; use POST /v1/auth/switch-organization. The environment can turn this off.',
        tags: ['me'],
        body: CreateUserOrganizationBody,
        response: { 201: UserOrganization },
      },
    },
    async (request, reply) => {
      const { environment, session: current } = sessionOf(request);
      return reply.code(201).send(await organizations.createForUser(environment, current.userId, request.body));
    },
  );

  app.get(
    '/v1/me/organization',
    {
      config: session,
      schema: {
        summary: 'The organization the session acts as, with your role; 404 when there is none',
        tags: ['me'],
        response: { 200: UserOrganization },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return organizations.currentOrganization(environment, current);
    },
  );

  app.patch(
    '/v1/me/organization',
    {
      config: session,
      schema: {
        summary: 'Rename the current organization, change its image or require MFA; needs org:manage',
        tags: ['me'],
        body: UpdateCurrentOrganizationBody,
        response: { 200: UserOrganization },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      if (request.body.mfaRequired === true) {
        organizations.assertMfaRequirable(environment);
        // Only a session that verified a second factor may make the organization require one.
        const factors = await sessions.lastVerification(environment, current.userId, current.sessionId);
        if (factors?.second_factor_at == null) throw secondFactorRequired();
      }
      return organizations.updateCurrentOrganization(environment, current.userId, organizationId, request.body);
    },
  );

  app.delete(
    '/v1/me/organization',
    {
      config: session,
      schema: {
        summary: 'Delete the current organization; needs org:delete (owners)',
        tags: ['me'],
        response: { 200: Deleted },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      await organizations.deleteOrganization(environment, { kind: 'member', userId: current.userId }, organizationId);
      return { id: organizationId, deleted: true as const };
    },
  );
};
