import type { TestApp, TestEnvironment } from './app.js';
import { json } from './identity.js';
import type { SoftAuthenticator, Tamper } from './webauthn.js';

/** A development page's origin: RP ID "localhost". */
export const LOCAL_ORIGIN = 'http://localhost:3000';

export function passkeyCall(t: TestApp, credential: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, origin = LOCAL_ORIGIN) {
  return t.call({
    method,
    url,
    credential,
    headers: { origin },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
}

export async function enablePasskeys(t: TestApp, environment: TestEnvironment = t.project.development) {
  await t.setSettings(environment.id, { authMethods: { passkey: true } });
}

/** Registration options for the session, then the authenticator's response, registered. */
export async function registerPasskey(t: TestApp, accessToken: string, authenticator: SoftAuthenticator, tamper: Tamper = {}, name?: string) {
  const started = await passkeyCall(t, accessToken, 'POST', '/v1/me/passkeys/registration', undefined, authenticator.origin);
  if (started.statusCode !== 200) throw new Error(`registration options failed: ${started.statusCode} ${started.body}`);
  const response = authenticator.create(json(started).options, tamper);
  return passkeyCall(t, accessToken, 'POST', '/v1/me/passkeys', { response, ...(name ? { name } : {}) }, authenticator.origin);
}

export async function passkeyOptions(t: TestApp, authenticator: SoftAuthenticator, environment: TestEnvironment = t.project.development) {
  const started = await passkeyCall(t, environment.publishableKey, 'POST', '/v1/auth/passkey/options', {}, authenticator.origin);
  if (started.statusCode !== 200) throw new Error(`passkey options failed: ${started.statusCode} ${started.body}`);
  return json(started) as { attemptId: string; options: any };
}

export function passkeyVerify(t: TestApp, environment: TestEnvironment, attemptId: string, response: unknown, origin = LOCAL_ORIGIN) {
  return passkeyCall(t, environment.publishableKey, 'POST', '/v1/auth/passkey/verify', { attemptId, response }, origin);
}

/** A whole passkey sign-in; `tamper` bends the assertion. */
export async function signInWithPasskey(t: TestApp, authenticator: SoftAuthenticator, environment: TestEnvironment = t.project.development, tamper: Tamper = {}) {
  const { attemptId, options } = await passkeyOptions(t, authenticator, environment);
  return passkeyVerify(t, environment, attemptId, authenticator.get(options, tamper), authenticator.origin);
}
