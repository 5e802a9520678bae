import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Deleted, OidcPreset, SsoConnection, SsoConnectionList, UserinfoFields } from '@gatehouse/contract';
import { Type } from 'typebox';
import { acceptFormBodies } from '../http/forms.js';
import { IdParams } from '../http/schemas.js';
import type { TenancyService } from '../tenancy/service.js';
import { endpoints } from './connections.js';
import type { SsoFlowService } from './flow.js';
import type { ConnectionInput, SsoConnectionService } from './service.js';

const platform = { credentials: ['platform'] } as const;
const tags = ['sso'];
const BASE = '/v1/platform/environments/:environmentId/sso-connections';
const Str = (max: number) => Type.String({ minLength: 1, maxLength: max });

const connectionFields = {
  name: Str(100),
  domains: Type.Array(Str(253), { maxItems: 50 }),
  preset: Type.Union([OidcPreset, Type.Null()]),
  issuer: Str(2048),
  clientId: Str(512),
  clientSecret: Str(2048),
  scopes: Type.Array(Str(200), { maxItems: 30 }),
  idpMetadataXml: Type.String({ minLength: 1, maxLength: 512 * 1024 }),
  idpEntityId: Str(1024),
  idpSsoUrl: Str(2048),
  idpCertificate: Str(16 * 1024),
  allowIdpInitiated: Type.Boolean(),
  idpInitiatedRedirectUrl: Type.Union([Str(2048), Type.Null()]),
  // Generic OAuth 2.0 (type "oauth2"), and trustEmailVerified for generic OIDC too.
  authorizationUrl: Str(2048),
  tokenUrl: Str(2048),
  userinfoUrl: Str(2048),
  userinfoFields: UserinfoFields,
  trustEmailVerified: Type.Boolean(),
  tokenEndpointAuthMethod: Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')]),
  // Apple: the client secret is a JWT signed with this key.
  teamId: Str(20),
  keyId: Str(20),
  privateKey: Str(8 * 1024),
};
const optional = Object.fromEntries(Object.entries(connectionFields).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof connectionFields]: ReturnType<typeof Type.Optional<(typeof connectionFields)[K]>>;
};
const CreateBody = Type.Object(
  { type: Type.Union([Type.Literal('oidc'), Type.Literal('oauth2'), Type.Literal('saml')]), ...optional },
  {
    additionalProperties: false,
    description:
      'OIDC: {type:"oidc", name, domains, issuer, clientId, clientSecret, scopes?, trustEmailVerified?} or {type:"oidc", preset, name, domains, clientId, clientSecret} (Apple: teamId, keyId, privateKey instead of clientSecret). OAuth 2.0: {type:"oauth2", name, domains, authorizationUrl, tokenUrl, userinfoUrl, clientId, clientSecret, scopes?, userinfoFields:{id, email, emailVerified?}, trustEmailVerified?}. SAML: {type:"saml", name, domains, idpMetadataXml} or the three idp* fields. domains: [] makes a social connection, started by connectionId only.',
  },
);
const PatchBody = Type.Object(optional, { additionalProperties: false });

/** The platform's SSO connections. */
export const ssoConnectionRoutes: FastifyPluginAsyncTypebox<{ connections: SsoConnectionService; tenancy: TenancyService }> = async (
  app,
  { connections, tenancy },
) => {
  const environment = (id: string) => tenancy.getEnvironment(id);
  acceptFormBodies(app);

  app.post(
    BASE,
    { config: platform, schema: { summary: 'Create an SSO connection (OIDC or SAML)', tags, params: IdParams('environmentId'), body: CreateBody, response: { 201: SsoConnection } } },
    async (request, reply) => {
      const created = await connections.create(await environment(request.params.environmentId), request.body as ConnectionInput);
      return reply.code(201).send(connections.view(created));
    },
  );

  app.get(
    BASE,
    { config: platform, schema: { summary: 'List the SSO connections of an environment', tags, params: IdParams('environmentId'), response: { 200: SsoConnectionList } } },
    async (request) => ({ data: (await connections.list(await environment(request.params.environmentId))).map((c) => connections.view(c)) }),
  );

  app.get(
    `${BASE}/:connectionId`,
    { config: platform, schema: { summary: 'Read an SSO connection (never its secret)', tags, params: IdParams('environmentId', 'connectionId'), response: { 200: SsoConnection } } },
    async (request) => connections.view(await connections.get(await environment(request.params.environmentId), request.params.connectionId)),
  );

  app.patch(
    `${BASE}/:connectionId`,
    {
      config: platform,
      schema: { summary: 'Change an SSO connection; omitted fields keep their values', tags, params: IdParams('environmentId', 'connectionId'), body: PatchBody, response: { 200: SsoConnection } },
    },
    async (request) =>
      connections.view(await connections.update(await environment(request.params.environmentId), request.params.connectionId, request.body as ConnectionInput)),
  );

  app.delete(
    `${BASE}/:connectionId`,
    { config: platform, schema: { summary: 'Delete an SSO connection and its linked identities', tags, params: IdParams('environmentId', 'connectionId'), response: { 200: Deleted } } },
    async (request) => {
      await connections.remove(await environment(request.params.environmentId), request.params.connectionId);
      return { id: request.params.connectionId, deleted: true as const };
    },
  );

};

/** The IdPs' side: OIDC redirect URIs, the SAML ACS and the SP metadata. */
export const ssoCallbackRoutes: FastifyPluginAsyncTypebox<{ flows: SsoFlowService; baseUrl: string }> = async (app, { flows, baseUrl }) => {
  acceptFormBodies(app);

  app.get(
    '/v1/sso/oidc/:connectionId/callback',
    { schema: { summary: 'OIDC redirect URI (the browser arrives from the IdP)', tags, params: IdParams('connectionId') } },
    async (request, reply) => {
      const query = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
      const { location } = await flows.oidcCallback(request.params.connectionId, query);
      return reply.code(303).header('cache-control', 'no-store').redirect(location, 303);
    },
  );

  app.post(
    '/v1/sso/oidc/:connectionId/callback',
    {
      schema: {
        summary: 'OIDC redirect URI, response_mode=form_post (Sign in with Apple posts its answer)',
        tags,
        params: IdParams('connectionId'),
        // Strings only, as at the ACS: anything else is a 400 naming the field.
        body: Type.Record(Type.String(), Type.String({ maxLength: 16 * 1024 }), { description: 'The form the provider posts: code, state, and for Apple user.' }),
      },
    },
    async (request, reply) => {
      const { location } = await flows.oidcCallback(request.params.connectionId, new URLSearchParams(request.body ?? {}));
      return reply.header('cache-control', 'no-store').redirect(location, 303);
    },
  );

  app.post(
    '/v1/sso/saml/:connectionId/acs',
    {
      schema: {
        summary: 'SAML assertion consumer service (HTTP-POST binding)',
        tags,
        params: IdParams('connectionId'),
        // Strings only: whatever else is posted is a 400 naming the field, never a crash further in.
        body: Type.Object(
          { SAMLResponse: Type.Optional(Type.String({ maxLength: 512 * 1024 })), RelayState: Type.Optional(Type.String({ maxLength: 1024 })) },
          { description: 'The form the IdP posts: SAMLResponse (base64) and RelayState.' },
        ),
      },
    },
    async (request, reply) => {
      const { location } = await flows.samlAcs(request.params.connectionId, request.body ?? {});
      return reply.header('cache-control', 'no-store').redirect(location, 303);
    },
  );

  app.get(
    '/v1/sso/saml/:connectionId/metadata',
    { schema: { summary: 'SAML SP metadata for this connection (import it at the IdP)', tags, params: IdParams('connectionId') } },
    async (request, reply) => {
      await flows.samlConnection(request.params.connectionId);
      const urls = endpoints(baseUrl, request.params.connectionId);
      const { buildSpMetadata } = await import('./saml/metadata.js');
      return reply.type('application/samlmetadata+xml; charset=utf-8').send(buildSpMetadata(urls));
    },
  );
};
