import { Type, type Static } from 'typebox';
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
