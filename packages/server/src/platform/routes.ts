import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  EmailVerification,
  MfaPolicy,
  CreatedProject,
  CreatedSecretKey,
  PlatformEnvironment,
  Project,
  ProjectPage,
  SecretKeyList,
  TokenAlgorithm,
} from '@gatehouse/contract';
import { Type } from 'typebox';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import type { TenancyService } from '../tenancy/service.js';
import { ACCESS_TOKEN_TTL, AuthMethodsSchema, SESSION_LIFETIME, effectiveRateLimit, type Environment } from '../tenancy/settings.js';

const DomainField = Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()]);

const SettingsPatch = Type.Object(
  {
    domain: Type.Optional(DomainField),
    callbackOrigins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems: 50 })),
    authMethods: Type.Optional(Type.Partial(AuthMethodsSchema, { additionalProperties: false })),
    signUp: Type.Optional(Type.Boolean()),
    accessTokenTtlSeconds: Type.Optional(Type.Integer({ minimum: ACCESS_TOKEN_TTL.min, maximum: ACCESS_TOKEN_TTL.max })),
    tokenAlgorithm: Type.Optional(TokenAlgorithm),
    rateLimitPerMinute: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()])),
    sessionLifetimeSeconds: Type.Optional(
      Type.Integer({ minimum: SESSION_LIFETIME.min, maximum: SESSION_LIFETIME.max, description: 'Absolute session lifetime' }),
    ),
    sessionInactivitySeconds: Type.Optional(
      Type.Integer({ minimum: SESSION_LIFETIME.min, maximum: SESSION_LIFETIME.max, description: 'Inactivity timeout (no refresh)' }),
    ),
    usersCanCreateOrganizations: Type.Optional(
      Type.Boolean({ description: 'Whether signed-in users may create organizations with POST /v1/me/organizations (default true)' }),
    ),
    emailVerification: Type.Optional(EmailVerification),
    mfa: Type.Optional(MfaPolicy),
    sessionClaims: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
        description:
          'Custom access-token claims: a JSON object (at most 1 KiB) whose string values may hold {{user.email}}, {{user.publicMetadata.<key>}} and the like; null removes them',
      }),
    ),
  },
  { additionalProperties: false },
);

export function environmentView(environment: Environment) {
  const s = environment.settings;
  return {
    id: environment.id,
    projectId: environment.projectId,
    type: environment.type,
    publishableKey: environment.publishableKey,
    domain: s.domain,
    callbackOrigins: s.callbackOrigins,
    authMethods: s.authMethods,
    signUp: s.signUp,
    accessTokenTtlSeconds: s.accessTokenTtlSeconds,
    tokenAlgorithm: s.tokenAlgorithm,
    rateLimitPerMinute: s.rateLimitPerMinute,
    rateLimit: { requestsPerMinute: effectiveRateLimit(environment) },
    sessionLifetimeSeconds: s.sessionLifetimeSeconds,
    sessionInactivitySeconds: s.sessionInactivitySeconds,
    usersCanCreateOrganizations: s.usersCanCreateOrganizations,
    emailVerification: s.emailVerification,
    mfa: s.mfa,
    sessionClaims: s.sessionClaims,
  };
}

function projectView(project: { id: string; name: string; created_at: number; logo_url: string | null }, environments: Environment[]) {
  return {
    id: project.id,
    name: project.name,
    createdAt: project.created_at,
    logoUrl: project.logo_url,
    environments: environments.map(environmentView),
  };
}

export interface PlatformRouteOptions {
  tenancy: TenancyService;
  cursors: CursorCodec;
}

const platform = { credentials: ['platform'] } as const;
const tags = ['platform'];

export const platformRoutes: FastifyPluginAsyncTypebox<PlatformRouteOptions> = async (app, { tenancy, cursors }) => {
  app.post(
    '/v1/platform/projects',
    {
      config: platform,
      schema: {
        summary: 'Create a project with its development and production environments',
        tags,
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }), domain: Type.Optional(DomainField) },
          { additionalProperties: false },
        ),
        response: { 201: CreatedProject },
      },
    },
    async (request, reply) => {
      const { project, environments } = await tenancy.createProject(request.body);
      return reply.code(201).send({
        id: project.id,
        name: project.name,
        domain: environments[0]!.environment.settings.domain,
        createdAt: project.createdAt,
        environments: environments.map(({ environment, secretKey }) => ({
          id: environment.id,
          type: environment.type,
          publishableKey: environment.publishableKey,
          secretKey,
        })),
      });
    },
  );

  app.get(
    '/v1/platform/projects',
    { config: platform, schema: { summary: 'List projects', tags, querystring: PaginationQuery, response: { 200: ProjectPage } } },
    async (request) => {
      const limit = request.query.limit ?? 20;
      const after = request.query.cursor ? cursors.decode<{ after: string }>(request.query.cursor).after : undefined;
      const { items, hasMore } = await tenancy.listProjects(limit, after);
      const last = items.at(-1);
      return {
        data: items.map(({ project, environments }) => projectView(project, environments)),
        nextCursor: hasMore && last ? cursors.encode({ after: last.project.id }) : null,
      };
    },
  );

  app.get(
    '/v1/platform/projects/:projectId',
    { config: platform, schema: { summary: 'Read a project', tags, params: IdParams('projectId'), response: { 200: Project } } },
    async (request) => {
      const { project, environments } = await tenancy.getProject(request.params.projectId);
      return projectView(project, environments);
    },
  );

  app.patch(
    '/v1/platform/projects/:projectId',
    {
      config: platform,
      schema: {
        summary: 'Rename a project, or set the domain of both its environments; omitted fields are unchanged',
        tags,
        params: IdParams('projectId'),
        body: Type.Object(
          { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), domain: Type.Optional(DomainField) },
          { additionalProperties: false },
        ),
        response: { 200: Project },
      },
    },
    async (request) => {
      const { project, environments } = await tenancy.updateProject(request.params.projectId, request.body);
      return projectView(project, environments);
    },
  );

  app.delete(
    '/v1/platform/projects/:projectId',
    {
      config: platform,
      schema: {
        summary:
          'Delete a project, both its environments and all their data (users, sessions, organizations, keys, emails, usage), at once and for good',
        tags,
        params: IdParams('projectId'),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await tenancy.deleteProject(request.params.projectId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/platform/environments/:environmentId',
    {
      config: platform,
      schema: {
        summary: 'Read an environment and its settings',
        tags,
        params: IdParams('environmentId'),
        response: { 200: PlatformEnvironment },
      },
    },
    async (request) => environmentView(await tenancy.getEnvironment(request.params.environmentId)),
  );

  app.patch(
    '/v1/platform/environments/:environmentId',
    {
      config: platform,
      schema: {
        summary: 'Change environment settings; omitted fields are unchanged',
        tags,
        params: IdParams('environmentId'),
        body: SettingsPatch,
        response: { 200: PlatformEnvironment },
      },
    },
    async (request) => environmentView(await tenancy.updateSettings(request.params.environmentId, request.body)),
  );

  app.get(
    '/v1/platform/environments/:environmentId/secret-keys',
    {
      config: platform,
      schema: {
        summary: "List an environment's secret keys (never their values)",
        tags,
        params: IdParams('environmentId'),
        response: { 200: SecretKeyList },
      },
    },
    async (request) => {
      const keys = await tenancy.listSecretKeys(request.params.environmentId);
      return { data: keys.map((k) => ({ id: k.id, hint: k.hint, createdAt: k.created_at, revokedAt: k.revoked_at })) };
    },
  );

  app.post(
    '/v1/platform/environments/:environmentId/secret-keys',
    {
      config: platform,
      schema: {
        summary: 'Create a secret key; its value is shown only in this response',
        tags,
        params: IdParams('environmentId'),
        response: { 201: CreatedSecretKey },
      },
    },
    async (request, reply) => reply.code(201).send(await tenancy.createSecretKey(request.params.environmentId)),
  );

  app.delete(
    '/v1/platform/environments/:environmentId/secret-keys/:keyId',
    {
      config: platform,
      schema: { summary: 'Revoke a secret key at once', tags, params: IdParams('environmentId', 'keyId'), response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await tenancy.revokeSecretKey(request.params.environmentId, request.params.keyId);
      return reply.code(204).send(null);
    },
  );
};
