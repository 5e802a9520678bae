import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Jwks, OpenIdConfiguration, SessionList, SigningKey, SigningKeyList } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import { apiError } from '../lib/errors.js';
import type { TenancyService } from '../tenancy/service.js';
import type { SessionService } from './service.js';
import { ACTIVATION_MARGIN_MS, JWKS_MAX_AGE_SECONDS, KEY_ACTIVATION_DELAY_MS, VERIFIER_COOLDOWN_MS } from './key-schedule.js';
import type { SigningKeys } from './signing-keys.js';
import type { AccessTokens } from './tokens.js';

const RotateBody = Type.Object(
  {
    immediate: Type.Optional(
      Type.Boolean({
        description:
          'Emergency only: the new key signs at once. Verifiers that fetched the JWKS shortly before refuse its tokens until they may fetch again (up to 30 s with jose defaults; up to 5.5 min behind a cache honouring max-age)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The JWKS and discovery documents may be cached by verifiers this long; rotations wait it out. */
const KEYS_CACHE_CONTROL = `public, max-age=${JWKS_MAX_AGE_SECONDS}`;

export interface SessionRouteOptions {
  sessions: SessionService;
  keys: SigningKeys;
  tokens: AccessTokens;
  tenancy: TenancyService;
}

export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRouteOptions> = async (app, { sessions, keys, tokens, tenancy }) => {
  app.get(
    '/v1/environments/:environmentId/.well-known/jwks.json',
    {
      schema: {
        summary: "The environment's public signing keys (JWKS); no credential needed",
        tags: ['keys'],
        params: IdParams('environmentId'),
        response: { 200: Jwks },
      },
    },
    async (request, reply) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      void reply.header('cache-control', KEYS_CACHE_CONTROL);
      return keys.jwks(environment);
    },
  );

  app.get(
    '/v1/environments/:environmentId/.well-known/openid-configuration',
    {
      schema: {
        summary: 'Minimal OpenID discovery document: issuer and jwks_uri',
        tags: ['keys'],
        params: IdParams('environmentId'),
        response: { 200: OpenIdConfiguration },
      },
    },
    async (request, reply) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      const issuer = tokens.issuer(environment.id);
      void reply.header('cache-control', KEYS_CACHE_CONTROL);
      return {
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: [environment.settings.tokenAlgorithm],
      };
    },
  );

  app.get(
    '/v1/jwks',
    {
      config: { credentials: ['publishable', 'secret'], rateLimit: false },
      schema: { summary: "The calling environment's public signing keys (JWKS)", tags: ['keys'], response: { 200: Jwks } },
    },
    async (request, reply) => {
      void reply.header('cache-control', KEYS_CACHE_CONTROL);
      return keys.jwks(environmentOf(request));
    },
  );

  app.get(
    '/v1/me/sessions',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: "The signed-in user's live sessions",
        tags: ['me'],
        response: { 200: SessionList },
      },
    },
    async (request) => {
      const { environment, session } = sessionOf(request);
      return { data: await sessions.listForUser(environment, session.userId, session.sessionId) };
    },
  );

  app.get(
    '/v1/users/:userId/sessions',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: "A user's live sessions (the console's user page)",
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: SessionList },
      },
    },
    async (request) => ({ data: await sessions.listForUser(environmentOf(request), request.params.userId) }),
  );

  app.delete(
    '/v1/users/:userId/sessions/:sessionId',
    {
      config: { credentials: ['secret'] },
      schema: {
        summary: 'Revoke one live session of a user',
        tags: ['users'],
        params: IdParams('userId', 'sessionId'),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await sessions.revokeOwn(environmentOf(request), request.params.userId, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/v1/me/sessions/:sessionId',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: "Revoke one of the signed-in user's sessions (the current one signs out)",
        tags: ['me'],
        params: IdParams('sessionId'),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const { environment, session } = sessionOf(request);
      await sessions.revokeOwn(environment, session.userId, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/platform/environments/:environmentId/signing-keys',
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'The published signing keys of an environment, with their state (never their private halves)',
        description:
          'Latest activation first: a pending key (published, not signing yet), the active key, and retired keys still published.',
        tags: ['platform'],
        params: IdParams('environmentId'),
        response: { 200: SigningKeyList },
      },
    },
    async (request) => ({ data: await keys.list(await tenancy.getEnvironment(request.params.environmentId)) }),
  );

  app.post(
    '/v1/platform/environments/:environmentId/signing-keys/rotate',
    {
      config: { credentials: ['platform'] },
      // The body is optional: a bare POST (what clients sent before `immediate` existed) is a staged rotation.
      preValidation: async (request) => {
        const body: unknown = request.body;
        if (body === undefined || body === null || body === '') request.body = {};
      },
      schema: {
        summary: 'Rotate the signing key, staged so that no verifier refuses a valid token',
        description: [
          `Publishes a new key in the JWKS at once; it starts signing at \`activatesAt\`, ${KEY_ACTIVATION_DELAY_MS / 1000} s later`,
          `(the JWKS max-age of ${JWKS_MAX_AGE_SECONDS} s, a verifier cooldown of ${VERIFIER_COOLDOWN_MS / 1000} s as in jose, and a`,
          `${ACTIVATION_MARGIN_MS / 1000} s margin), when every verifier has fetched it or may fetch it.`,
          'From then the previous key signs no more, and it stays published until every token it signed has expired.',
          'Answers 201 with the new key (`state: "pending"`). While a rotation is pending, another one answers 200 with that same',
          'pending key and changes nothing. `{"immediate": true}` is the emergency rotation: the new key signs at once',
          '(201, `state: "active"`, replacing any pending key), and verifiers that fetched the JWKS less than their cooldown',
          'before (30 s with jose defaults) refuse its tokens until they may fetch again.',
          'The body may be omitted: a bare POST is a staged rotation.',
        ].join(' '),
        tags: ['platform'],
        params: IdParams('environmentId'),
        body: RotateBody,
        response: { 200: SigningKey, 201: SigningKey },
      },
    },
    async (request, reply) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      const { key, created } = await keys.rotate(environment, { immediate: request.body.immediate === true });
      return reply.code(created ? 201 : 200).send(key);
    },
  );

  app.post(
    '/v1/platform/environments/:environmentId/signing-keys/:kid/revoke',
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Revoke a (compromised) signing key: it leaves the JWKS and its tokens are refused at once',
        description: [
          'The key is unpublished at once and never signs again; `/v1/me*` refuses the access tokens it signed on every node',
          '(401 unauthenticated). A key that was signing is first replaced by a new key that signs at once (an emergency',
          'rotation); a pending key is dropped and the active key signs on. Sessions are not revoked: a refresh gets a token',
          "from the current key. Offline verifiers accept the revoked key's tokens until they fetch the JWKS again",
          '(docs/verifying-tokens.md). Answers the revoked key (`state: "retired"`); revoking it again changes nothing.',
        ].join(' '),
        tags: ['platform'],
        params: Type.Object({ environmentId: Type.String({ maxLength: 100 }), kid: Type.String({ maxLength: 100 }) }),
        response: { 200: SigningKey },
      },
    },
    async (request) => {
      const environment = await tenancy.getEnvironment(request.params.environmentId);
      const key = await keys.revoke(environment, request.params.kid);
      if (!key) throw apiError('not_found', `Signing key ${request.params.kid} was not found in environment ${environment.id}.`);
      return key;
    },
  );
};
