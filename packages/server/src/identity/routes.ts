import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateUserBody,
  Deleted,
  ImportUsersBody,
  ImportUsersResult,
  Me,
  OrganizationSummary,
  PasswordChanged,
  ProfileUpdateBody,
  SessionsRevoked,
  SessionUser,
  UpdateUserBody,
  UpdateUserMetadataBody,
  User,
  UserPage,
} from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf, type SessionIdentity } from '../http/credentials.js';
import { apiError } from '../lib/errors.js';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import type { Environment } from '../tenancy/settings.js';
import { Password } from './fields.js';
import type { PasswordService } from './password-service.js';
import type { IdentityService, UserDeletionGuard } from './service.js';
import { importUsers } from './import.js';

/** The bulk import's body limit: 1,000 rows, metadata included. */
const IMPORT_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * What GET /v1/me shows of organizations. The Organizations feature supplies it; until then the
 * caller belongs to none.
 */
export type MeOrganizationsProvider = (
  environment: Environment,
  session: SessionIdentity,
) => Promise<{ organizations: readonly OrganizationSummary[]; organization: OrganizationSummary | null }>;

const noOrganizations: MeOrganizationsProvider = async () => ({ organizations: [], organization: null });

export interface IdentityRouteOptions {
  identity: IdentityService;
  passwords: Pick<PasswordService, 'changePassword'>;
  cursors: CursorCodec;
  meOrganizations?: MeOrganizationsProvider | undefined;
  /**
   * DELETE /v1/me's reverification (mfa/): run in the deletion's transaction, it refuses unless the
   * session verified a factor in the last 10 minutes.
   */
  recentlyVerified: (session: SessionIdentity) => UserDeletionGuard;
}

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;

export const identityRoutes: FastifyPluginAsyncTypebox<IdentityRouteOptions> = async (app, options) => {
  const { identity, passwords, cursors } = options;
  const meOrganizations = options.meOrganizations ?? noOrganizations;

  // ---- /v1/me (session access token)

  app.get(
    '/v1/me',
    {
      config: session,
      schema: {
        summary: 'The signed-in user, their organizations, and the organization the session acts as',
        tags: ['me'],
        response: {
          200: Me,
        },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      const [user, orgs] = await Promise.all([identity.currentUser(environment, current), meOrganizations(environment, current)]);
      // The list may be a cached, frozen one; the response gets its own array.
      return { user, organizations: [...orgs.organizations], organization: orgs.organization };
    },
  );

  app.patch(
    '/v1/me',
    {
      config: session,
      schema: {
        summary: "Change the signed-in user's profile; omitted fields are unchanged, null clears; unsafeMetadata replaces the object",
        tags: ['me'],
        body: ProfileUpdateBody,
        response: { 200: SessionUser },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return identity.updateUser(environment, current.userId, request.body);
    },
  );

  app.delete(
    '/v1/me',
    {
      config: session,
      schema: {
        summary: "Delete the signed-in user's account; needs a verification within 10 minutes",
        description:
          '403 reverification_required without one (POST /v1/me/reverify first); 403 forbidden while the user is the last owner of an organization.',
        tags: ['me'],
        response: { 200: Deleted },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      await identity.deleteUser(environment, current.userId, options.recentlyVerified(current));
      return { id: current.userId, deleted: true as const };
    },
  );

  app.post(
    '/v1/me/password',
    {
      config: session,
      schema: {
        summary: 'Change the password; needs the current one. Revokes every other session.',
        tags: ['me'],
        body: Type.Object(
          { currentPassword: Type.Optional(Password), newPassword: Password },
          // currentPassword is optional in the schema only so that leaving it out is a 401
          // invalid_credentials (a missing credential), not a 400.
          { additionalProperties: false },
        ),
        response: { 200: PasswordChanged },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return passwords.changePassword(environment, current, request.body);
    },
  );

  // ---- /v1/users (secret key)

  app.get(
    '/v1/users',
    {
      config: secret,
      schema: {
        summary: 'List users, newest first',
        tags: ['users'],
        querystring: Type.Object(
          {
            ...PaginationQuery.properties,
            email: Type.Optional(Type.String({ maxLength: 1024, description: 'Exact address (normalized like at sign-up)' })),
            query: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive text in email, names or username' })),
            externalId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 255, description: 'Exact externalId (the id in the system the user came from)' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: UserPage },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      const { limit = 20, cursor, email, query, externalId } = request.query;
      const before = cursor ? cursors.decode<{ env: string; before: string }>(cursor) : undefined;
      if (before && before.env !== environment.id) {
        throw apiError('invalid_request', 'The cursor belongs to another environment. Pass back the nextCursor value of this listing.', {
          fields: ['cursor'],
        });
      }
      const { users, hasMore } = await identity.listUsers(environment, { limit, beforeId: before?.before, email, query, externalId });
      const last = users.at(-1);
      return { data: users, nextCursor: hasMore && last ? cursors.encode({ env: environment.id, before: last.id }) : null };
    },
  );

  app.post(
    '/v1/users',
    {
      config: secret,
      schema: {
        summary: 'Create a user; without a password they sign in by another method',
        tags: ['users'],
        body: CreateUserBody,
        response: { 201: User },
      },
    },
    async (request, reply) => reply.code(201).send(await identity.createUser(environmentOf(request), request.body)),
  );

  app.post(
    '/v1/users/import',
    {
      config: secret,
      // 1,000 rows with their metadata do not fit the 1 MiB of other JSON bodies.
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        summary: 'Import up to 1,000 users in one call, each as POST /v1/users takes it; answers one result per row',
        description:
          'Rows are created on their own: a bad row gets its error and the others go on. A row whose externalId already has a user answers that user with created: false, so an interrupted import can be sent again. More than 1,000 rows: 400, nobody created.',
        tags: ['users'],
        body: ImportUsersBody,
        response: { 200: ImportUsersResult },
      },
    },
    async (request) => ({
      data: await importUsers(identity, environmentOf(request), request.body.users, (error) =>
        request.log.error({ err: error }, 'import row failed'),
      ),
    }),
  );

  app.get(
    '/v1/users/:userId',
    { config: secret, schema: { summary: 'Read a user', tags: ['users'], params: IdParams('userId'), response: { 200: User } } },
    async (request) => identity.getUser(environmentOf(request), request.params.userId),
  );

  app.patch(
    '/v1/users/:userId',
    {
      config: secret,
      schema: {
        summary: 'Change a user; omitted fields are unchanged, null clears',
        tags: ['users'],
        params: IdParams('userId'),
        body: UpdateUserBody,
        response: { 200: User },
      },
    },
    async (request) => identity.updateUser(environmentOf(request), request.params.userId, request.body),
  );

  app.delete(
    '/v1/users/:userId',
    {
      config: secret,
      schema: {
        summary: 'Delete a user and revoke their sessions; refused while they are the last owner of an organization',
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await identity.deleteUser(environmentOf(request), request.params.userId);
      return { id: request.params.userId, deleted: true as const };
    },
  );

  app.post(
    '/v1/users/:userId/sessions/revoke',
    {
      config: secret,
      schema: {
        summary: 'Revoke every session of a user (their refresh tokens stop at once; /v1/me refuses their access tokens)',
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: SessionsRevoked },
      },
    },
    async (request) => ({ revoked: await identity.revokeSessions(environmentOf(request), request.params.userId) }),
  );

  app.patch(
    '/v1/users/:userId/metadata',
    {
      config: secret,
      schema: {
        summary: "Merge into a user's metadata: objects merge key by key, a null removes its key",
        tags: ['users'],
        params: IdParams('userId'),
        body: UpdateUserMetadataBody,
        response: { 200: User },
      },
    },
    async (request) => identity.mergeMetadata(environmentOf(request), request.params.userId, request.body),
  );

  app.post(
    '/v1/users/:userId/ban',
    {
      config: secret,
      schema: {
        summary: 'Ban a user: every session is revoked at once and every sign-in answers 403 user_banned',
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: User },
      },
    },
    async (request) => identity.ban(environmentOf(request), request.params.userId),
  );

  app.post(
    '/v1/users/:userId/unban',
    {
      config: secret,
      schema: {
        summary: 'Lift a ban: the user may sign in again (their old sessions stay revoked)',
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: User },
      },
    },
    async (request) => identity.unban(environmentOf(request), request.params.userId),
  );
};
