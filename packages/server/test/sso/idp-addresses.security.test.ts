import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, enableSso, json, ssoStart } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

/**
 * SSRF through SSO: a production connection's IdP is reached only at public addresses, resolved and
 * checked at every call (the webhook sender's guard), for the issuer and every endpoint its
 * discovery document names. Names resolve through the test; the IdP is a stand-in fetch that
 * answers only after the guard let the call through, and records what reached it.
 */
describe(`SSO IdP address attacks (${testDb()})`, () => {
  let t: TestApp;
  let listener: net.Server;
  let port = 0;
  let connections = 0;
  const dns = new Map<string, string>();
  const reached: string[] = [];
  let document: Record<string, unknown> = {};

  const ISSUER = 'https://idp.public.test';
  const stand = async (url: string, init: { method: string }) => {
    reached.push(`${init.method} ${url}`);
    if (url === `${ISSUER}/.well-known/openid-configuration`) {
      return new Response(JSON.stringify(document), { status: 200, headers: { 'content-type': 'application/json' } });
    }
    return new Response('{}', { status: 404, headers: { 'content-type': 'application/json' } });
  };

  beforeAll(async () => {
    // A service on loopback the server must never connect to.
    listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
    t = await startTestApp({
      sso: {
        resolve: async (host) => {
          const address = dns.get(host);
          if (!address) throw new Error(`unknown host ${host}`);
          return [{ address, family: net.isIP(address) }];
        },
      },
    });
    await enableSso(t, t.project.production);
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => listener.close(resolve));
  });

  it('SSRF: a production issuer whose host name resolves to loopback is refused, and nothing connects to loopback', async () => {
    dns.set('intranet-idp.example.com', '127.0.0.1');
    const res = await createConnection(t, t.project.production, {
      type: 'oidc',
      name: 'X',
      domains: [],
      issuer: `https://intranet-idp.example.com:${port}/`,
      clientId: 'c',
      clientSecret: 's',
    });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.details.fields).toEqual(['issuer']);
    expect(json(res).error.message).toContain('127.0.0.1');
    expect(connections).toBe(0);
  });

  it.each([
    ['localhost.', 'https://localhost./'],
    ['an IPv4-compatible IPv6 loopback', 'https://[::127.0.0.1]/'],
    ['a decimal IPv4 loopback', 'https://2130706433/'],
  ])('SSRF: a production issuer written as %s is refused at save', async (_name, issuer) => {
    const res = await createConnection(t, t.project.production, { type: 'oidc', name: 'X', domains: [], issuer, clientId: 'c', clientSecret: 's' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.details.fields).toEqual(['issuer']);
  });

  describe('with an IdP at a public address', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp({
        sso: {
          fetch: stand,
          resolve: async (host) => {
            const address = dns.get(host);
            if (!address) throw new Error(`unknown host ${host}`);
            return [{ address, family: net.isIP(address) }];
          },
        },
      });
      await enableSso(app, app.project.production);
      dns.set('idp.public.test', '203.0.113.10');
      dns.set('internal.public.test', '10.0.0.5');
    });
    afterAll(() => app.close());

    const discovery = (overrides: Record<string, unknown>) => ({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/authorize`,
      token_endpoint: `${ISSUER}/token`,
      jwks_uri: `${ISSUER}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      ...overrides,
    });
    const create = () =>
      createConnection(app, app.project.production, { type: 'oidc', name: 'Corp', domains: ['corp.test'], issuer: ISSUER, clientId: 'c', clientSecret: 's' });

    it.each([
      ['token_endpoint', 'https://internal.public.test/token'],
      ['jwks_uri', 'https://169.254.169.254/latest/meta-data'],
      ['userinfo_endpoint', 'https://[::ffff:127.0.0.1]/userinfo'],
      ['token_endpoint', 'http://idp.public.test/token'],
    ])('SSRF: a discovery document whose %s points inside (%s) is refused', async (field, url) => {
      document = discovery({ [field]: url });
      const res = await create();
      expect(res.statusCode).toBe(400);
      expect(json(res).error.message).toContain(field);
    });

    it("DNS rebinding: a token_endpoint re-pointed at loopback after the save gets no code-and-secret POST", async () => {
      document = discovery({ token_endpoint: 'https://token.public.test/token' });
      dns.set('token.public.test', '203.0.113.11');
      const created = await create();
      expect(created.statusCode, created.body).toBe(201);
      const start = await ssoStart(app, app.project.production, { connectionId: json(created).id });
      expect(start.statusCode, start.body).toBe(200);
      const state = new URL(json(start).url).searchParams.get('state')!;
      dns.set('token.public.test', '127.0.0.1');
      reached.length = 0;
      const callback = await app.call({ method: 'GET', url: `${new URL(json(created).redirectUri).pathname}?code=abc&state=${encodeURIComponent(state)}` });
      expect(callback.statusCode).toBe(303);
      const landed = new URL(String(callback.headers.location));
      expect(landed.searchParams.get('token')).toBeNull();
      expect(landed.searchParams.get('error')).toBe('idp_unavailable');
      expect(reached.filter((r) => r.includes('token.public.test'))).toEqual([]);
    });
  });
});
