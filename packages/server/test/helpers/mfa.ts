import { base32Decode, hotp, timeStep } from '../../src/mfa/totp.js';
import type { TestApp, TestEnvironment } from './app.js';
import { GOOD_PASSWORD, json, signIn } from './identity.js';

/** The code an authenticator app shows for `secret` (base32) at `nowMs`, or `offset` steps away. */
export function totpCode(secret: string, nowMs = Date.now(), offset = 0): string {
  return hotp(base32Decode(secret)!, timeStep(nowMs) + offset);
}

export function mfaCall(t: TestApp, accessToken: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) {
  return t.call({
    method,
    url,
    credential: accessToken,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
}

/** Enables TOTP for the session's user; answers the secret and the backup codes. */
export async function enableTotp(t: TestApp, accessToken: string, now: () => number = Date.now) {
  const setup = await mfaCall(t, accessToken, 'POST', '/v1/me/mfa/totp');
  if (setup.statusCode !== 200) throw new Error(`TOTP setup failed: ${setup.statusCode} ${setup.body}`);
  const { secret } = json(setup);
  const verified = await mfaCall(t, accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: totpCode(secret, now()) });
  if (verified.statusCode !== 200) throw new Error(`TOTP verify failed: ${verified.statusCode} ${verified.body}`);
  return { secret: secret as string, backupCodes: json(verified).backupCodes as string[] };
}

export function reverify(t: TestApp, accessToken: string, body: Record<string, unknown>) {
  return mfaCall(t, accessToken, 'POST', '/v1/me/reverify', body);
}

/** POST /v1/auth/signin/second-factor: the second step of a sign-in the door answered with 202. */
export function secondFactor(t: TestApp, body: Record<string, unknown>, environment: TestEnvironment = t.project.development) {
  return t.call({ method: 'POST', url: '/v1/auth/signin/second-factor', credential: environment.publishableKey, payload: body });
}

/** A password sign-in completed with a TOTP code `offset` steps away (each step can be used once). */
export async function signInWithTotp(t: TestApp, email: string, secret: string, options: { now?: number; offset?: number } = {}) {
  const first = await signIn(t, email, GOOD_PASSWORD);
  if (first.statusCode !== 202) throw new Error(`Expected a second-factor step: ${first.statusCode} ${first.body}`);
  const done = await secondFactor(t, {
    attemptId: json(first).attemptId,
    factor: 'totp',
    code: totpCode(secret, options.now ?? Date.now(), options.offset ?? 0),
  });
  if (done.statusCode !== 200) throw new Error(`Second factor failed: ${done.statusCode} ${done.body}`);
  return json(done).session as { accessToken: string; refreshToken: string };
}
