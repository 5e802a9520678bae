import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateInvitationBody,
  Invitation,
  InvitationList,
  InvitationListQuery,
  Member,
  UserInvitationList,
} from '@gatehouse/contract';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { Actor } from '../organizations/access.js';
import type { MemberService } from '../organizations/member-service.js';
import type { InvitationService } from './service.js';

export interface InvitationRouteOptions {
  invitations: InvitationService;
  /** For the session's current organization. */
  members: Pick<MemberService, 'currentOrganizationId'>;
}

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const backend: Actor = { kind: 'backend' };
const tags = ['invitations'];

export const invitationRoutes: FastifyPluginAsyncTypebox<InvitationRouteOptions> = async (app, { invitations, members }) => {
  app.post(
    '/v1/organizations/:organizationId/invitations',
    {
      config: secret,
      schema: {
        summary: 'Invite someone by email; inviting a pending address again refreshes its invitation',
        tags,
        params: IdParams('organizationId'),
        body: CreateInvitationBody,
        response: { 201: Invitation },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await invitations.create(environmentOf(request), backend, request.params.organizationId, request.body)),
  );

  app.get(
    '/v1/organizations/:organizationId/invitations',
    {
      config: secret,
      schema: {
        summary: "An organization's invitations, newest first (at most 500)",
        tags,
        params: IdParams('organizationId'),
        querystring: InvitationListQuery,
        response: { 200: InvitationList },
      },
    },
    async (request) => ({
      data: await invitations.list(environmentOf(request), backend, request.params.organizationId, request.query.status),
    }),
  );

  app.post(
    '/v1/organizations/:organizationId/invitations/:invitationId/revoke',
    {
      config: secret,
      schema: {
        summary: 'Revoke an invitation; its link stops working',
        tags,
        params: IdParams('organizationId', 'invitationId'),
        response: { 200: Invitation },
      },
    },
    async (request) => invitations.revoke(environmentOf(request), backend, request.params.organizationId, request.params.invitationId),
  );

  app.post(
    '/v1/me/organization/invitations',
    {
      config: session,
      schema: {
        summary: 'Invite someone to the current organization; needs org:members:manage',
        tags,
        body: CreateInvitationBody,
        response: { 201: Invitation },
      },
    },
    async (request, reply) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      const actor: Actor = { kind: 'member', userId: current.userId };
      return reply.code(201).send(await invitations.create(environment, actor, organizationId, request.body));
    },
  );

  app.get(
    '/v1/me/organization/invitations',
    {
      config: session,
      schema: {
        summary: "The current organization's invitations; needs org:members:manage",
        tags,
        querystring: InvitationListQuery,
        response: { 200: InvitationList },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      return {
        data: await invitations.list(environment, { kind: 'member', userId: current.userId }, organizationId, request.query.status),
      };
    },
  );

  app.post(
    '/v1/me/organization/invitations/:invitationId/revoke',
    {
      config: session,
      schema: {
        summary: 'Revoke an invitation of the current organization; needs org:members:manage',
        tags,
        params: IdParams('invitationId'),
        response: { 200: Invitation },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      return invitations.revoke(environment, { kind: 'member', userId: current.userId }, organizationId, request.params.invitationId);
    },
  );

  app.get(
    '/v1/me/invitations',
    {
      config: session,
      schema: {
        summary: "Pending invitations addressed to the signed-in user's email, once it is verified",
        tags,
        response: { 200: UserInvitationList },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return { data: await invitations.listForUser(environment, current.userId) };
    },
  );

  app.post(
    '/v1/me/invitations/:invitationId/accept',
    {
      config: session,
      schema: {
        summary: 'Accept an invitation addressed to your verified email; answers the new member',
        tags,
        params: IdParams('invitationId'),
        response: { 200: Member },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return invitations.acceptAsUser(environment, current.userId, request.params.invitationId);
    },
  );
};
