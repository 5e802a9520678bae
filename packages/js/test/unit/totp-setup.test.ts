import { afterEach, describe, expect, it } from 'vitest';
import { createGatehouse, type Gatehouse } from '../../src/index.js';

/**
 * signIn.totpSetup() against a scripted server: each setup request answers a new secret (as the
 * server's replaces the pending one), or fails when told to. The real exchange is in
 * test/second-factor.test.ts and the React browser suite.
 */
function scriptedServer() {
  let serial = 0;
  let attempts = 0;
  const setups: string[] = [];
  const failNext = { count: 0 };
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const path = new URL(String(input)).pathname;
    const body = init.body ? JSON.parse(String(init.body)) : {};
    if (path === '/v1/auth/signin') {
      attempts++;
      return json(202, { status: 'needs_second_factor_setup', attemptId: `sia_${attempts}`, factors: ['totp', 'passkey'] });
    }
    if (path === '/v1/auth/signin/second-factor/totp-setup') {
      setups.push(body.attemptId);
      // Answered on a later turn, as a network would: calls made meanwhile find the request in flight.
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (failNext.count > 0) {
        failNext.count--;
        return json(503, { error: { code: 'unavailable', message: 'scripted' } });
      }
      serial++;
      return json(200, { secret: `SECRET${serial}`, otpauthUrl: `otpauth://totp/Acme:a?secret=SECRET${serial}` });
    }
    return json(404, { error: { code: 'not_found', message: path } });
  };
  return { fetch, setups, failNext };
}

const clients: Gatehouse[] = [];
afterEach(() => {
  for (const gh of clients.splice(0)) gh.destroy();
});

async function signedInHalfway(server: ReturnType<typeof scriptedServer>) {
  const gh = createGatehouse({
    publishableKey: 'pk_test_x',
    baseUrl: 'http://gatehouse.test/',
    storage: 'memory',
    fetch: server.fetch as typeof fetch,
  });
  clients.push(gh);
  expect(await gh.signIn.password({ email: 'a@example.test', password: 'a password' })).toMatchObject({
    status: 'needs_second_factor_setup',
  });
  return gh;
}

describe('signIn.totpSetup()', () => {
  it('called twice while its request is in flight (a component mounted twice), sends one request and answers its secret to both', async () => {
    const server = scriptedServer();
    const gh = await signedInHalfway(server);
    const [first, second] = await Promise.all([gh.signIn.totpSetup(), gh.signIn.totpSetup()]);
    expect(server.setups).toEqual(['sia_1']);
    expect(second).toEqual(first);
  });

  it('called once the request has answered, asks again: the server may have replaced the secret since', async () => {
    const server = scriptedServer();
    const gh = await signedInHalfway(server);
    const first = await gh.signIn.totpSetup();
    const again = await gh.signIn.totpSetup();
    expect(server.setups).toEqual(['sia_1', 'sia_1']);
    expect(again.secret).not.toBe(first.secret);
  });

  it('a failed request is not kept: the next call asks again', async () => {
    const server = scriptedServer();
    const gh = await signedInHalfway(server);
    server.failNext.count = 1;
    await expect(gh.signIn.totpSetup()).rejects.toMatchObject({ status: 503 });
    await expect(gh.signIn.totpSetup()).resolves.toMatchObject({ secret: 'SECRET1' });
    expect(server.setups).toHaveLength(2);
  });

  it('another attempt never gets the secret of the first, even while its request is in flight', async () => {
    const server = scriptedServer();
    const gh = await signedInHalfway(server);
    const first = gh.signIn.totpSetup();
    const other = gh.signIn.totpSetup({ attemptId: 'sia_other' });
    expect(await other).not.toEqual(await first);
    expect(server.setups).toEqual(['sia_1', 'sia_other']);
  });
});
