import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Role, RoleList } from '@gatehouse/contract';
import { Type } from 'typebox';
import { IdParams } from '../http/schemas.js';
import type { TenancyService } from '../tenancy/service.js';
import type { RoleService } from './role-service.js';
import { Name, Nullable, Permissions, RoleDescription } from './schemas.js';

/** An environment's custom organization roles, managed with the platform key. */
export interface RoleRouteOptions {
  roles: RoleService;
  tenancy: TenancyService;
}

const platform = { credentials: ['platform'] } as const;

export const roleRoutes: FastifyPluginAsyncTypebox<RoleRouteOptions> = async (app, { roles, tenancy }) => {
  // ---- custom roles (platform key)

  app.get(
    '/v1/platform/environments/:environmentId/roles',
    {
      config: platform,
      schema: {
        summary: "An environment's organization roles: the system roles, then its custom roles",
        tags: ['platform'],
        params: IdParams('environmentId'),
        response: { 200: RoleList },
      },
    },
    async (request) => ({ data: await roles.listRoles(await tenancy.getEnvironment(request.params.environmentId)) }),
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
        response: { 201: Role },
      },
    },
    async (request, reply) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      return reply.code(201).send(await roles.createRole(environment, request.body));
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
        response: { 200: Role },
      },
    },
    async (request) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      return roles.updateRole(environment, request.params.roleKey, request.body);
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
      await roles.deleteRole(environment, request.params.roleKey);
      return reply.code(204).send(null);
    },
  );
};
