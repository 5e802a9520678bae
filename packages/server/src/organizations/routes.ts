import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionTokens } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { apiError } from '../lib/errors.js';
import { IdParams, page, PaginationQuery } from '../http/schemas.js';
import { EMAIL_MAX_LENGTH } from '../identity/email.js';
import { MAX_IMAGE_URL_LENGTH } from '../assets/image-url.js';
import type { CursorCodec } from '../lib/cursor.js';
import { requestContext } from '../http/request-context.js';
import type { SessionService } from '../sessions/service.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import type { Actor, OrganizationService } from './service.js';
import { SLUG_MAX_LENGTH } from './slugs.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const Slug = Type.String({ minLength: 1, maxLength: SLUG_MAX_LENGTH, description: '[a-z0-9-], unique in the environment' });
const ImageUrl = Type.String({
  minLength: 1,
  maxLength: MAX_IMAGE_URL_LENGTH,
  description: 'An https URL, or the publicUrl of an upload ticket (POST /v1/me/assets/upload-url)',
});
const Role = Type.String({ minLength: 1, maxLength: 64, description: 'owner, admin, member, or a custom role of the environment' });
const Email = Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64 });
const Id = Type.String({ minLength: 1, maxLength: 128 });

export const OrganizationSchema = Type.Object({
  id: Type.String({ description: 'org_…' }),
  name: Type.String(),
  slug: Type.String(),
  imageUrl: Nullable(Type.String()),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

const UserOrganizationSchema = Type.Object({
  ...OrganizationSchema.properties,
  role: Type.String({ description: "The caller's role in the organization" }),
  permissions: Type.Array(Type.String(), { description: 'What that role allows, read live' }),
});

const MemberSchema = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  imageUrl: Nullable(Type.String()),
  role: Type.String(),
  createdAt: Type.Integer({ description: 'When they joined' }),
});

const RemovalSchema = Type.Object({ organizationId: Type.String(), userId: Type.String(), removed: Type.Literal(true) });

const RoleSchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  permissions: Type.Array(Type.String()),
  system: Type.Boolean({ description: 'System roles (owner, admin, member) are fixed' }),
  createdAt: Type.Union([Type.Integer(), Type.Null()]),
  updatedAt: Type.Union([Type.Integer(), Type.Null()]),
});

const RoleDescription = Type.String({ maxLength: 500 });
const Permissions = Type.Array(Type.String({ minLength: 1, maxLength: 140 }), {
  maxItems: 100,
  description: 'Permission keys of the form org:<feature>:<action>',
});

const OrganizationCreate = {
  name: Name,
  slug: Type.Optional(Slug),
  imageUrl: Type.Optional(Nullable(ImageUrl)),
};

const RoleBody = Type.Object({ role: Role }, { additionalProperties: false });

const MemberListQuery = PaginationQuery;

export interface OrganizationRouteOptions {
  organizations: OrganizationService;
  sessions: SessionService;
  tenancy: TenancyService;
  cursors: CursorCodec;
}

const publishable = { credentials: ['publishable'] } as const;
const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const platform = { credentials: ['platform'] } as const;
const backend: Actor = { kind: 'backend' };

function foreignCursor(): never {
  throw apiError('invalid_request', 'The cursor belongs to another listing. Pass back the nextCursor value of this listing.', {
    fields: ['cursor'],
  });
}

export const organizationRoutes: FastifyPluginAsyncTypebox<OrganizationRouteOptions> = async (app, options) => {
  const { organizations, sessions, tenancy, cursors } = options;

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
    const { members, hasMore } = await organizations.listMembers(environment, actor, organizationId, { limit, after });
    const last = members.at(-1);
    return {
      data: members,
      nextCursor: hasMore && last ? cursors.encode({ env: environment.id, org: organizationId, c: last.createdAt, u: last.userId }) : null,
    };
  }

  // ---- /v1/auth (publishable key)

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
        response: { 200: Type.Object({ session: SessionTokens }) },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      const { refreshToken, organizationId } = request.body;
      const tokens = await sessions.refresh(environment, refreshToken, requestContext(request), {
        organizationId,
        authorize: (tx, userId) => organizations.authorizeSwitch(tx, environment, userId, organizationId),
      });
      return { session: tokens };
    },
  );

  // ---- /v1/organizations (secret key)

  app.post(
    '/v1/organizations',
    {
      config: secret,
      schema: {
        summary: 'Create an organization; ownerId becomes its first owner',
        tags: ['organizations'],
        body: Type.Object({ ...OrganizationCreate, ownerId: Id }, { additionalProperties: false }),
        response: { 201: OrganizationSchema },
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
        response: { 200: page(OrganizationSchema) },
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
        response: { 200: OrganizationSchema },
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
        body: Type.Object(
          { name: Type.Optional(Name), slug: Type.Optional(Slug), imageUrl: Type.Optional(Nullable(ImageUrl)) },
          { additionalProperties: false },
        ),
        response: { 200: OrganizationSchema },
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
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => {
      await organizations.deleteOrganization(environmentOf(request), backend, request.params.organizationId);
      return { id: request.params.organizationId, deleted: true as const };
    },
  );

  app.get(
    '/v1/organizations/:organizationId/members',
    {
      config: secret,
      schema: {
        summary: 'List the members of an organization, in the order they joined',
        tags: ['organizations'],
        params: IdParams('organizationId'),
        querystring: MemberListQuery,
        response: { 200: page(MemberSchema) },
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
        body: Type.Object(
          { userId: Type.Optional(Id), email: Type.Optional(Email), role: Type.Optional(Role) },
          { additionalProperties: false, description: 'Exactly one of userId or email; role defaults to member' },
        ),
        response: { 201: MemberSchema },
      },
    },
    async (request, reply) => {
      const { role = 'member', ...who } = request.body;
      const member = await organizations.addMember(environmentOf(request), backend, request.params.organizationId, { ...who, role });
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
        response: { 200: MemberSchema },
      },
    },
    async (request) => organizations.getMember(environmentOf(request), backend, request.params.organizationId, request.params.userId),
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
        response: { 200: MemberSchema },
      },
    },
    async (request) =>
      organizations.updateMemberRole(
        environmentOf(request),
        backend,
        request.params.organizationId,
        request.params.userId,
        request.body.role,
      ),
  );

  app.delete(
    '/v1/organizations/:organizationId/members/:userId',
    {
      config: secret,
      schema: {
        summary: 'Remove a member; the last owner cannot be removed',
        tags: ['organizations'],
        params: IdParams('organizationId', 'userId'),
        response: { 200: RemovalSchema },
      },
    },
    async (request) => organizations.removeMember(environmentOf(request), backend, request.params.organizationId, request.params.userId),
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
        response: { 200: page(UserOrganizationSchema) },
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
        body: Type.Object(OrganizationCreate, { additionalProperties: false }),
        response: { 201: UserOrganizationSchema },
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
        response: { 200: UserOrganizationSchema },
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
        summary: 'Rename the current organization or change its image; needs org:manage',
        tags: ['me'],
        body: Type.Object({ name: Type.Optional(Name), imageUrl: Type.Optional(Nullable(ImageUrl)) }, { additionalProperties: false }),
        response: { 200: UserOrganizationSchema },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
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
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      await organizations.deleteOrganization(environment, { kind: 'member', userId: current.userId }, organizationId);
      return { id: organizationId, deleted: true as const };
    },
  );

  app.get(
    '/v1/me/organization/members',
    {
      config: session,
      schema: {
        summary: 'Members of the current organization, in the order they joined',
        tags: ['me'],
        querystring: MemberListQuery,
        response: { 200: page(MemberSchema) },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
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
        body: Type.Object({ email: Email, role: Type.Optional(Role) }, { additionalProperties: false }),
        response: { 201: MemberSchema },
      },
    },
    async (request, reply) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      const member = await organizations.addMember(environment, { kind: 'member', userId: current.userId }, organizationId, {
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
        response: { 200: MemberSchema },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      return organizations.getMember(environment, { kind: 'member', userId: current.userId }, organizationId, request.params.userId);
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
        response: { 200: MemberSchema },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      return organizations.updateMemberRole(
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
        response: { 200: RemovalSchema },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const organizationId = organizations.currentOrganizationId(current);
      return organizations.removeMember(environment, { kind: 'member', userId: current.userId }, organizationId, request.params.userId);
    },
  );

  // ---- custom roles (platform key)

  app.get(
    '/v1/platform/environments/:environmentId/roles',
    {
      config: platform,
      schema: {
        summary: "An environment's organization roles: the system roles, then its custom roles",
        tags: ['platform'],
        params: IdParams('environmentId'),
        response: { 200: Type.Object({ data: Type.Array(RoleSchema) }) },
      },
    },
    async (request) => ({ data: await organizations.listRoles(await tenancy.getEnvironment(request.params.environmentId)) }),
  );

  app.post(
    '/v1/platform/environments/:environmentId/roles',
    {
      config: platform,
      schema: {
        summary: 'Define a custom organization role',
        tags: ['platform'],
        params: IdParams('environmentId'),
        body: Type.Object(
          {
            key: Type.String({ minLength: 1, maxLength: 64, description: 'Lowercase letters, digits, "_" and "-"' }),
            name: Name,
            description: Type.Optional(Nullable(RoleDescription)),
            permissions: Permissions,
          },
          { additionalProperties: false },
        ),
        response: { 201: RoleSchema },
      },
    },
    async (request, reply) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      return reply.code(201).send(await organizations.createRole(environment, request.body));
    },
  );

  app.patch(
    '/v1/platform/environments/:environmentId/roles/:roleKey',
    {
      config: platform,
      schema: {
        summary: 'Change a custom role; its members get the new permissions at once',
        tags: ['platform'],
        params: IdParams('environmentId', 'roleKey'),
        body: Type.Object(
          { name: Type.Optional(Name), description: Type.Optional(Nullable(RoleDescription)), permissions: Type.Optional(Permissions) },
          { additionalProperties: false },
        ),
        response: { 200: RoleSchema },
      },
    },
    async (request) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      return organizations.updateRole(environment, request.params.roleKey, request.body);
    },
  );

  app.delete(
    '/v1/platform/environments/:environmentId/roles/:roleKey',
    {
      config: platform,
      schema: {
        summary: 'Delete a custom role that no membership holds',
        tags: ['platform'],
        params: IdParams('environmentId', 'roleKey'),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      await organizations.deleteRole(environment, request.params.roleKey);
      return reply.code(204).send(null);
    },
  );
};
