import type { TestApp } from '../helpers/app.js';
import { BASE_URL } from '../helpers/app.js';
import { GOOD_PASSWORD, json, uniqueEmail } from '../helpers/identity.js';

/** The console's origin: the base URL's. */
export const CONSOLE_ORIGIN = BASE_URL;

export function tokenOf(link: string): string {
  return new URL(link).searchParams.get('token')!;
}

export async function consoleConfig(t: TestApp): Promise<{ environmentId: string; publishableKey: string }> {
  return json(await t.call({ method: 'GET', url: '/v1/console/config' }));
}

export async function operatorSignIn(t: TestApp, email: string, password = GOOD_PASSWORD) {
  const { publishableKey } = await consoleConfig(t);
  const response = await t.call({
    method: 'POST',
    url: '/v1/auth/signin',
    credential: publishableKey,
    headers: { origin: CONSOLE_ORIGIN },
    payload: { email, password },
  });
  if (response.statusCode !== 200) throw new Error(`operator sign-in failed: ${response.statusCode} ${response.body}`);
  const body = json(response);
  return { userId: body.user.id as string, accessToken: body.session.accessToken as string, refreshToken: body.session.refreshToken as string };
}

/** Creates the first operator from a setup link, as the printed link does, and signs them in. */
export async function firstOperator(t: TestApp, email = uniqueEmail('operator')) {
  const link = await t.app.operators.setupLinkIfNoOperator();
  if (!link) throw new Error('an operator exists already');
  const created = await t.call({ method: 'POST', url: '/v1/console/setup', payload: { token: tokenOf(link), email, password: GOOD_PASSWORD } });
  if (created.statusCode !== 201) throw new Error(`setup failed: ${created.statusCode} ${created.body}`);
  return { email, link, ...(await operatorSignIn(t, email)) };
}
