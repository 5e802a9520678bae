import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ApiKeyList,
  ApiKeyPage,
  CreateApiKeyBody,
  CreatedApiKey,
  CreateOwnApiKeyBody,
  Deleted,
  VerifiedApiKey,
  VerifyApiKeyBody,
} from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import { foreignCursor } from '../organizations/access.js';
import type { ApiKeyService } from './service.js';

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const tags = ['api-keys'];

const ListQuery = Type.Object(
  { ...PaginationQuery.properties, subject: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'user_… or org_…' })) },
  { additionalProperties: false },
);

/** API keys: the caller's and their organization's with a session, any subject's with the secret key. */
export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeyService; cursors: CursorCodec }> = async (
  app,
  { apiKeys, cursors },
) => {
  const deleted = (id: string) => ({ id, deleted: true as const });

  app.post(
    '/v1/me/api-keys',
    {
      config: session,
      schema: {
        summary: 'Create an API key for yourself; its secret is shown in this answer only',
        description: 'The subject is always the signed-in user. Needs a factor verified in the last 10 minutes.',
        tags,
        body: CreateOwnApiKeyBody,
        response: { 201: CreatedApiKey },
      },
    },
    async (request, reply) => {
      const { environment, session: own } = sessionOf(request);
      return reply.code(201).send(await apiKeys.createOwn(environment, own, request.body));
    },
  );

  app.get(
    '/v1/me/api-keys',
    { config: session, schema: { summary: 'Your API keys, newest first (never their secrets)', tags, response: { 200: ApiKeyList } } },
    async (request) => {
      const { environment, session: own } = sessionOf(request);
      return { data: await apiKeys.listOwn(environment, own) };
    },
  );

  app.delete(
    '/v1/me/api-keys/:keyId',
    {
      config: session,
      schema: {
        summary: 'Revoke one of your API keys, on every node at once',
        tags,
        params: IdParams('keyId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      const { environment, session: own } = sessionOf(request);
      await apiKeys.revokeOwn(environment, own, request.params.keyId);
      return deleted(request.params.keyId);
    },
  );

  app.post(
    '/v1/me/organization/api-keys',
    {
      config: session,
      schema: {
        summary: 'Create an API key for your current organization (org:manage); its secret is shown in this answer only',
        tags,
        body: CreateOwnApiKeyBody,
        response: { 201: CreatedApiKey },
      },
    },
    async (request, reply) => {
      const { environment, session: own } = sessionOf(request);
      return reply.code(201).send(await apiKeys.createForOrganization(environment, own, request.body));
    },
  );

  app.get(
    '/v1/me/organization/api-keys',
    { config: session, schema: { summary: "Your current organization's API keys (org:manage)", tags, response: { 200: ApiKeyList } } },
    async (request) => {
      const { environment, session: own } = sessionOf(request);
      return { data: await apiKeys.listForOrganization(environment, own) };
    },
  );

  app.delete(
    '/v1/me/organization/api-keys/:keyId',
    {
      config: session,
      schema: {
        summary: "Revoke one of your current organization's API keys (org:manage)",
        tags,
        params: IdParams('keyId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      const { environment, session: own } = sessionOf(request);
      await apiKeys.revokeForOrganization(environment, own, request.params.keyId);
      return deleted(request.params.keyId);
    },
  );

  app.post(
    '/v1/api-keys',
    {
      config: secret,
      schema: {
        summary: 'Create an API key for a user or an organization; its secret is shown in this answer only',
        tags,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey },
      },
    },
    async (request, reply) => {
      const { subject, ...input } = request.body;
      return reply.code(201).send(await apiKeys.createForSubject(environmentOf(request), subject, input));
    },
  );

  app.get(
    '/v1/api-keys',
    {
      config: secret,
      schema: {
        summary: "The environment's API keys, or one subject's, newest first",
        tags,
        querystring: ListQuery,
        response: { 200: ApiKeyPage },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      const { limit = 20, cursor, subject } = request.query;
      let beforeId: string | undefined;
      if (cursor !== undefined) {
        const c = cursors.decode<{ env: string; s: string; id: string }>(cursor);
        if (c.env !== environment.id || c.s !== (subject ?? '')) foreignCursor();
        beforeId = c.id;
      }
      const { keys, hasMore } = await apiKeys.listPage(environment, subject, { limit, beforeId });
      const last = keys.at(-1);
      return { data: keys, nextCursor: hasMore && last ? cursors.encode({ env: environment.id, s: subject ?? '', id: last.id }) : null };
    },
  );

  app.delete(
    '/v1/api-keys/:keyId',
    {
      config: secret,
      schema: { summary: 'Revoke an API key, on every node at once', tags, params: IdParams('keyId'), response: { 200: Deleted } },
    },
    async (request) => {
      await apiKeys.revoke(environmentOf(request), request.params.keyId);
      return deleted(request.params.keyId);
    },
  );

  app.post(
    '/v1/api-keys/verify',
    {
      config: secret,
      schema: {
        summary: 'Verify an API key: its id, subject, scopes and expiry',
        description: 'An unknown, revoked or expired key is 401 unauthenticated, the same answer for each.',
        tags,
        body: VerifyApiKeyBody,
        response: { 200: VerifiedApiKey },
      },
    },
    async (request) => apiKeys.verify(environmentOf(request), request.body.secret, request),
  );
};
