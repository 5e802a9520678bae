import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AddCurrentMemberBody, AddMemberBody, Member, MemberPage, MemberRemoved, RoleBody } from '@gatehouse/contract';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import type { Environment } from '../tenancy/settings.js';
import { type Actor, foreignCursor } from './access.js';
import type { MemberService } from './member-service.js';
import { MemberListQuery } from './schemas.js';

/** An organization's members: by id with the secret key, and the current organization's with a session. */
export interface MemberRouteOptions {
  members: MemberService;
  cursors: CursorCodec;
}

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const backend: Actor = { kind: 'backend' };

export const memberRoutes: FastifyPluginAsyncTypebox<MemberRouteOptions> = async (app, { members, cursors }) => {
  /** Decodes a member-list cursor, which must belong to this organization's listing. */
  function memberCursor(environment: Environment, organizationId: string, cursor: string | undefined) {
    if (cursor === undefined) return undefined;
    const c = cursors.decode<{ env: string; org: string; c: number; u: string }>(cursor);
    if (c.env !== environment.id || c.org !== organizationId) foreignCursor();
    return { createdAt: c.c, userId: c.u };
  }

  async function memberPage(environment: Environment, actor: Actor, organizationId: string, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 20;
    const after = memberCursor(environment, organizationId, query.cursor);
    const result = await members.listMembers(environment, actor, organizationId, { limit, after });
    const last = result.members.at(-1);
    return {
      data: result.members,
      nextCursor:
        result.hasMore && last ? cursors.encode({ env: environment.id, org: organizationId, c: last.createdAt, u: last.userId }) : null,
    };
  }

  app.get(
    '/v1/organizations/:organizationId/members',
    {
      config: secret,
      schema: {
        summary: 'List the members of an organization, in the order they joined',
        tags: ['organizations'],
        params: IdParams('organizationId'),
        querystring: MemberListQuery,
        response: { 200: MemberPage },
      },
    },
    async (request) => memberPage(environmentOf(request), backend, request.params.organizationId, request.query),
  );

  app.post(
    '/v1/organizations/:organizationId/members',
    {
      config: secret,
      schema: {
        summary: 'Add an existing user to an organization, by userId or email',
        tags: ['organizations'],
        params: IdParams('organizationId'),
        body: AddMemberBody,
        response: { 201: Member },
      },
    },
    async (request, reply) => {
      const { role = 'member', ...who } = request.body;
      const member = await members.addMember(environmentOf(request), backend, request.params.organizationId, { ...who, role });
      return reply.code(201).send(member);
    },
  );

  app.get(
    '/v1/organizations/:organizationId/members/:userId',
    {
      config: secret,
      schema: {
        summary: 'Read one member of an organization',
        tags: ['organizations'],
        params: IdParams('organizationId', 'userId'),
        response: { 200: Member },
      },
    },
    async (request) => members.getMember(environmentOf(request), backend, request.params.organizationId, request.params.userId),
  );

  app.patch(
    '/v1/organizations/:organizationId/members/:userId',
    {
      config: secret,
      schema: {
        summary: "Change a member's role; the last owner cannot be demoted",
        tags: ['organizations'],
        params: IdParams('organizationId', 'userId'),
        body: RoleBody,
        response: { 200: Member },
      },
    },
    async (request) =>
      members.updateMemberRole(environmentOf(request), backend, request.params.organizationId, request.params.userId, request.body.role),
  );

  app.delete(
    '/v1/organizations/:organizationId/members/:userId',
    {
      config: secret,
      schema: {
        summary: 'Remove a member; the last owner cannot be removed',
        tags: ['organizations'],
        params: IdParams('organizationId', 'userId'),
        response: { 200: MemberRemoved },
      },
    },
    async (request) => members.removeMember(environmentOf(request), backend, request.params.organizationId, request.params.userId),
  );

  app.get(
    '/v1/me/organization/members',
    {
      config: session,
      schema: {
        summary: 'Members of the current organization, in the order they joined',
        tags: ['me'],
        querystring: MemberListQuery,
        response: { 200: MemberPage },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      return memberPage(environment, { kind: 'member', userId: current.userId }, organizationId, request.query);
    },
  );

  app.post(
    '/v1/me/organization/members',
    {
      config: session,
      schema: {
        summary: 'Add someone who has an account to the current organization; needs org:members:manage',
        tags: ['me'],
        body: AddCurrentMemberBody,
        response: { 201: Member },
      },
    },
    async (request, reply) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      const member = await members.addMember(environment, { kind: 'member', userId: current.userId }, organizationId, {
        email: request.body.email,
        role: request.body.role ?? 'member',
      });
      return reply.code(201).send(member);
    },
  );

  app.get(
    '/v1/me/organization/members/:userId',
    {
      config: session,
      schema: {
        summary: 'One member of the current organization',
        tags: ['me'],
        params: IdParams('userId'),
        response: { 200: Member },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      return members.getMember(environment, { kind: 'member', userId: current.userId }, organizationId, request.params.userId);
    },
  );

  app.patch(
    '/v1/me/organization/members/:userId',
    {
      config: session,
      schema: {
        summary: "Change a member's role; needs org:members:manage, and owner to grant owner or change an owner",
        tags: ['me'],
        params: IdParams('userId'),
        body: RoleBody,
        response: { 200: Member },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      return members.updateMemberRole(
        environment,
        { kind: 'member', userId: current.userId },
        organizationId,
        request.params.userId,
        request.body.role,
      );
    },
  );

  app.delete(
    '/v1/me/organization/members/:userId',
    {
      config: session,
      schema: {
        summary: 'Remove a member (yourself with no permission; others need org:members:manage); never the last owner',
        tags: ['me'],
        params: IdParams('userId'),
        response: { 200: MemberRemoved },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = members.currentOrganizationId(current);
      return members.removeMember(environment, { kind: 'member', userId: current.userId }, organizationId, request.params.userId);
    },
  );
};
