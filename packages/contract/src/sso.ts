import { Type, type Static } from 'typebox';
import { List } from './lists.js';
import { define } from './registry.js';

export const SsoConnectionType = Type.Union([Type.Literal('oidc'), Type.Literal('oauth2'), Type.Literal('saml')]);
export const OidcPreset = Type.Union([
  Type.Literal('google'),
  Type.Literal('github'),
  Type.Literal('microsoft'),
  Type.Literal('apple'),
  Type.Literal('gitlab'),
  Type.Literal('discord'),
  Type.Literal('linkedin'),
]);
export type OidcPreset = Static<typeof OidcPreset>;

/** Generic OAuth 2.0: where the id, email and its verification flag are in the userinfo JSON (dot paths). */
export const UserinfoFields = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 300 }),
    email: Type.String({ minLength: 1, maxLength: 300 }),
    emailVerified: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    lastName: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  },
  { additionalProperties: false },
);

/** A connection as the platform API shows it: never its client secret. */
export const SsoConnection = define(
  'SsoConnection',
  Type.Object({
    id: Type.String({ description: 'ssoc_…' }),
    type: SsoConnectionType,
    name: Type.String(),
    domains: Type.Array(Type.String()),
    preset: Type.Optional(Type.Union([OidcPreset, Type.Null()])),
    issuer: Type.Optional(Type.String()),
    clientId: Type.Optional(Type.String()),
    scopes: Type.Optional(Type.Array(Type.String())),
    trustEmailVerified: Type.Optional(
      Type.Boolean({
        description: "Generic OIDC and OAuth 2.0: the operator trusts the provider's email verification (it may link existing accounts)",
      }),
    ),
    teamId: Type.Optional(Type.String({ description: 'Apple: the Team ID signing the client secret' })),
    keyId: Type.Optional(Type.String({ description: 'Apple: the Key ID signing the client secret' })),
    authorizationUrl: Type.Optional(Type.String()),
    tokenUrl: Type.Optional(Type.String()),
    userinfoUrl: Type.Optional(Type.String()),
    userinfoFields: Type.Optional(UserinfoFields),
    tokenEndpointAuthMethod: Type.Optional(Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')])),
    redirectUri: Type.Optional(Type.String({ description: 'OIDC and OAuth 2.0: register this redirect URI at the provider' })),
    idpEntityId: Type.Optional(Type.String()),
    idpSsoUrl: Type.Optional(Type.String()),
    allowIdpInitiated: Type.Optional(Type.Boolean()),
    spEntityId: Type.Optional(Type.String()),
    acsUrl: Type.Optional(Type.String()),
    spMetadataUrl: Type.Optional(Type.String()),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  }),
);
export type SsoConnection = Static<typeof SsoConnection>;

export const SsoConnectionList = List('SsoConnectionList', SsoConnection);
export type SsoConnectionList = Static<typeof SsoConnectionList>;

export const SsoStarted = define('SsoStarted', Type.Object({ url: Type.String({ description: 'Send the browser here' }) }));
export type SsoStarted = Static<typeof SsoStarted>;

/** A provider account linked to a user (GET /v1/me/identities). */
const identityFields = {
  id: Type.String({ description: 'idn_…' }),
  connectionId: Type.String({ description: 'ssoc_…' }),
  type: SsoConnectionType,
  provider: Type.String({ description: 'The preset (google, github, apple…), else the type (oidc, oauth2, saml)' }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'The email the provider gave at the last sign-in' }),
  createdAt: Type.Integer(),
};
export const UserIdentity = define('UserIdentity', Type.Object(identityFields));
export type UserIdentity = Static<typeof UserIdentity>;

export const UserIdentityList = List('UserIdentityList', UserIdentity);
export type UserIdentityList = Static<typeof UserIdentityList>;

/** POST /v1/me/identities: start linking a provider to the signed-in user. */
export const LinkIdentityParams = define(
  'LinkIdentityParams',
  Type.Object(
    {
      connectionId: Type.String({ minLength: 1, maxLength: 128 }),
      redirectUrl: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Where the browser returns: with token=… (complete it with the same session) or error=…',
      }),
    },
    { additionalProperties: false },
  ),
);
export type LinkIdentityParams = Static<typeof LinkIdentityParams>;

/** POST /v1/me/identities/complete: the token a link's return carried. */
export const CompleteIdentityLinkParams = define(
  'CompleteIdentityLinkParams',
  Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false }),
);
export type CompleteIdentityLinkParams = Static<typeof CompleteIdentityLinkParams>;

/** A webhook's data for identity.created and identity.deleted: the identity and its user. */
export const UserIdentityEvent = define('UserIdentityEvent', Type.Object({ ...identityFields, userId: Type.String() }));
export type UserIdentityEvent = Static<typeof UserIdentityEvent>;
