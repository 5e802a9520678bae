import { Type, type Static } from 'typebox';
import { define } from './registry.js';

/** The second factors a sign-in can ask for, in the order `factors` lists them. */
export const SecondFactorName = Type.Union([Type.Literal('totp'), Type.Literal('backup_code'), Type.Literal('passkey')]);
export type SecondFactorName = Static<typeof SecondFactorName>;

/**
 * 202 of every way in when a first factor succeeded but no session starts yet: the user has a second
 * factor (`needs_second_factor`: `factors` lists theirs), or must set one up because the environment's
 * `mfa` is "required" (`needs_second_factor_setup`: `factors` lists what can be set up).
 */
export const SecondFactorNeeded = define(
  'SecondFactorNeeded',
  Type.Object({
    status: Type.Union([Type.Literal('needs_second_factor'), Type.Literal('needs_second_factor_setup')]),
    attemptId: Type.String({ description: 'sia_…: pass it to POST /v1/auth/signin/second-factor within 10 minutes' }),
    factors: Type.Array(SecondFactorName, { description: 'In the order totp, backup_code, passkey' }),
  }),
);
export type SecondFactorNeeded = Static<typeof SecondFactorNeeded>;
