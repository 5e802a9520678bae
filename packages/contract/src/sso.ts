import { Type, type Static } from 'typebox';
import { List } from './lists.js';
import { define } from './registry.js';

export const SsoConnectionType = Type.Union([Type.Literal('oidc'), Type.Literal('saml')]);
export const OidcPreset = Type.Union([Type.Literal('google'), Type.Literal('github'), Type.Literal('microsoft')]);

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
    redirectUri: Type.Optional(Type.String({ description: 'OIDC: register this redirect URI at the IdP' })),
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

export const SsoStarted = define('SsoStarted', Type.Object({ url: Type.String({ description: 'Send the browser here' }) }));
export type SsoStarted = Static<typeof SsoStarted>;
