/** Setting up SSO through the platform API and following the redirects back, as a browser would. */
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, TestEnvironment } from './app.js';
import { json } from './identity.js';

export const REDIRECT_URL = 'https://app.example.test/sso/done';

export async function enableSso(t: TestApp, environment: TestEnvironment, sso = true): Promise<void> {
  await t.setSettings(environment.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso } });
}

export function createConnection(t: TestApp, environment: TestEnvironment, body: Record<string, unknown>) {
  return t.call({ method: 'POST', url: `/v1/platform/environments/${environment.id}/sso-connections`, credential: t.platformKey, payload: body });
}

export async function ssoStart(t: TestApp, environment: TestEnvironment, body: Record<string, unknown>) {
  return t.call({ method: 'POST', url: '/v1/auth/sso/start', credential: environment.publishableKey, payload: { redirectUrl: REDIRECT_URL, ...body } });
}

export function ssoVerify(t: TestApp, environment: TestEnvironment, token: string) {
  return t.call({ method: 'POST', url: '/v1/auth/sso/verify', credential: environment.publishableKey, payload: { token } });
}

/** Where a 303 from the callback or ACS leads, with its query read out. */
export function landing(response: LightMyRequestResponse): { url: URL; token: string | null; error: string | null } {
  if (response.statusCode !== 303) throw new Error(`expected a 303, got ${response.statusCode}: ${response.body}`);
  const url = new URL(String(response.headers.location));
  return { url, token: url.searchParams.get('token'), error: url.searchParams.get('error') };
}

export function postAcs(t: TestApp, acsPath: string, fields: Record<string, string>) {
  return t.call({
    method: 'POST',
    url: acsPath,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

export { json };
