import { Type, type Static } from 'typebox';
import { List } from './lists.js';
import { define } from './registry.js';

export const SessionTokens = define(
  'SessionTokens',
  Type.Object({
    accessToken: Type.String({ description: 'JWT (typ at+jwt) for /v1/me* and for your own backend' }),
    refreshToken: Type.String({ description: 'rt_…; exchange at POST /v1/auth/refresh. Rotates on every use.' }),
    expiresIn: Type.Integer({ description: 'Lifetime of the access token in seconds' }),
    tokenType: Type.Literal('Bearer'),
  }),
);
export type SessionTokens = Static<typeof SessionTokens>;

/** Refresh and switch-organization: the rotated tokens. */
export const SessionRefreshed = define('SessionRefreshed', Type.Object({ session: SessionTokens }));
export type SessionRefreshed = Static<typeof SessionRefreshed>;

/** A live session as its user sees it (never a token). */
export const Session = define(
  'Session',
  Type.Object({
    id: Type.String(),
    createdAt: Type.Integer(),
    lastActiveAt: Type.Integer({ description: 'Last sign-in or refresh' }),
    expiresAt: Type.Integer({ description: 'End of the absolute lifetime' }),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    amr: Type.Array(Type.String(), { description: 'The factors this session verified, in order (pwd, email, sso, totp, backup_code…)' }),
    actor: Type.Optional(
      Type.Object({ sub: Type.String() }, { description: 'Present when the session is impersonated: who acts (docs/impersonation.md)' }),
    ),
    current: Type.Boolean({ description: 'Whether this is the session making the request' }),
  }),
);
export type Session = Static<typeof Session>;

export const SessionList = List('SessionList', Session);
export type SessionList = Static<typeof SessionList>;

export const Jwks = define(
  'Jwks',
  Type.Object({
    keys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), kty: Type.String() }, { additionalProperties: true })),
  }),
);
export type Jwks = Static<typeof Jwks>;

export const OpenIdConfiguration = define(
  'OpenIdConfiguration',
  Type.Object({ issuer: Type.String(), jwks_uri: Type.String() }, { additionalProperties: true }),
);
export type OpenIdConfiguration = Static<typeof OpenIdConfiguration>;

export const SigningKey = define(
  'SigningKey',
  Type.Object({
    kid: Type.String(),
    algorithm: Type.String(),
    state: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('retired')], {
      description:
        'pending: published, signs from activatesAt; active: signs new tokens; retired: signs no more, published until publishUntil',
    }),
    createdAt: Type.Integer({ description: 'When the key was made and published (ms since the epoch)' }),
    activatesAt: Type.Integer({ description: 'From when the key signs; in the future while pending' }),
    retiredAt: Type.Union([Type.Integer(), Type.Null()], {
      description: "When the key stops (or stopped) signing: its successor's activatesAt. Null while no successor is scheduled",
    }),
    publishUntil: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The key stays in the JWKS until then, after every token it signed has expired',
    }),
  }),
);
export type SigningKey = Static<typeof SigningKey>;

export const SigningKeyList = List('SigningKeyList', SigningKey);
export type SigningKeyList = Static<typeof SigningKeyList>;

/** POST /v1/me/handoff: where a hosted page sends the user, with `#__gh_handoff=<one-time token>`. */
export const HandoffRedirect = define('HandoffRedirect', Type.Object({ redirectUrl: Type.String() }));
export type HandoffRedirect = Static<typeof HandoffRedirect>;
