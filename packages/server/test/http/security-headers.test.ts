import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityHeaders } from '../../src/http/security-headers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, signUp, type SignedIn } from '../helpers/identity.js';
import { makePng } from '../helpers/images.js';
import { createOrg } from '../helpers/organizations.js';
import { uploadThroughApi } from '../helpers/uploads.js';

/** What every answer carries, whatever the route and status. */
function expectBaseHeaders(res: LightMyRequestResponse, what: string): void {
  expect(res.headers['x-content-type-options'], what).toBe('nosniff');
  expect(res.headers['x-frame-options'], what).toBe('DENY');
  expect(res.headers['referrer-policy'], what).toBe('no-referrer');
  // The test app's base URL is plain http: no HSTS.
  expect(res.headers['strict-transport-security'], what).toBeUndefined();
}

/** An API answer: the base, and never stored, never framed, never loaded by another site's <img>. */
function expectApiHeaders(res: LightMyRequestResponse, what: string): void {
  expectBaseHeaders(res, what);
  expect(res.headers['content-security-policy'], what).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(res.headers['cross-origin-resource-policy'], what).toBe('same-origin');
  expect(res.headers['cache-control'], what).toBe('no-store');
}

describe('response headers', () => {
  let t: TestApp;
  let user: SignedIn;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signUp(t);
  });
  afterAll(() => t.close());

  const pk = () => t.project.development.publishableKey;
  const sk = () => t.project.development.secretKey;

  it('responses holding tokens carry no-store: sign-up, sign-in, refresh, switch-organization', async () => {
    const signup = await t.call({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: pk(),
      payload: { email: `headers.${Date.now()}@example.test`, password: GOOD_PASSWORD },
    });
    expect(signup.statusCode).toBe(201);
    expectApiHeaders(signup, 'sign-up');
    const signin = await t.call({ method: 'POST', url: '/v1/auth/signin', credential: pk(), payload: { email: user.email, password: GOOD_PASSWORD } });
    expect(signin.statusCode).toBe(200);
    expectApiHeaders(signin, 'sign-in');
    const refreshed = await t.call({
      method: 'POST',
      url: '/v1/auth/refresh',
      credential: pk(),
      payload: { refreshToken: signin.json().session.refreshToken },
    });
    expect(refreshed.statusCode).toBe(200);
    expectApiHeaders(refreshed, 'refresh');
    const organization = await createOrg(t, user.userId);
    const switched = await t.call({
      method: 'POST',
      url: '/v1/auth/switch-organization',
      credential: pk(),
      payload: { refreshToken: refreshed.json().session.refreshToken, organizationId: organization.id },
    });
    expect(switched.statusCode).toBe(200);
    expectApiHeaders(switched, 'switch-organization');
  });

  it('responses holding personal data carry no-store: /v1/me*, /v1/users*, /v1/organizations*, /v1/platform/*, /v1/dev/*', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/v1/me', user.accessToken],
      ['GET', '/v1/me/sessions', user.accessToken],
      ['GET', '/v1/me/organizations', user.accessToken],
      ['GET', '/v1/users', sk()],
      ['GET', `/v1/users/${user.userId}`, sk()],
      ['GET', '/v1/organizations', sk()],
      ['GET', '/v1/dev/emails', sk()],
      ['GET', '/v1/platform/projects', t.platformKey],
      ['GET', `/v1/platform/projects/${t.project.id}`, t.platformKey],
      ['GET', '/v1/environment', pk()],
    ];
    for (const [method, url, credential] of cases) {
      const res = await t.call({ method: method as 'GET', url, credential });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
      expectApiHeaders(res, `${method} ${url}`);
    }
  });

  it('error answers carry them too: 400, 401, 403, 404 (route and resource), 415, 429', async () => {
    const errors: [string, () => Promise<LightMyRequestResponse>, number][] = [
      ['invalid body', () => t.call({ method: 'POST', url: '/v1/auth/signin', credential: pk(), payload: { email: 1 } }), 400],
      ['no credential', () => t.call({ method: 'GET', url: '/v1/me' }), 401],
      ['wrong password', () => t.call({ method: 'POST', url: '/v1/auth/signin', credential: pk(), payload: { email: user.email, password: 'nope nope nope' } }), 401],
      ['refused origin', () => t.call({ method: 'GET', url: '/v1/environment', credential: pk(), headers: { origin: 'https://evil.test' } }), 403],
      ['unknown route', () => t.call({ method: 'GET', url: '/v1/nothing-here' }), 404],
      ['unknown user', () => t.call({ method: 'GET', url: '/v1/users/user_00000000000000000000000000', credential: sk() }), 404],
      ['unknown image', () => t.call({ method: 'GET', url: `/v1/assets/${t.project.development.id}/${'0'.repeat(64)}` }), 404],
      [
        'wrong content type',
        () => t.call({ method: 'POST', url: '/v1/auth/signin', credential: pk(), headers: { 'content-type': 'text/plain' }, payload: 'x' }),
        415,
      ],
    ];
    for (const [what, send, status] of errors) {
      const res = await send();
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      expectApiHeaders(res, what);
    }
    const limited = await t.createProject('Limited');
    await t.setSettings(limited.development.id, { rateLimitPerMinute: 1 });
    await t.call({ method: 'GET', url: '/v1/environment', credential: limited.development.publishableKey });
    const refused = await t.call({ method: 'GET', url: '/v1/environment', credential: limited.development.publishableKey });
    expect(refused.statusCode).toBe(429);
    expectApiHeaders(refused, '429');
  });

  it('public documents carry them: health, OpenAPI, and CORS preflights', async () => {
    expectApiHeaders(await t.call({ method: 'GET', url: '/v1/health' }), 'health');
    expectApiHeaders(await t.call({ method: 'GET', url: '/v1/openapi.json' }), 'openapi');
    const preflight = await t.call({
      method: 'OPTIONS',
      url: '/v1/auth/signin',
      headers: { origin: 'https://example.test', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    expectApiHeaders(preflight, 'preflight');
  });

  it('JWKS and discovery stay cacheable, with the other headers', async () => {
    const environmentId = t.project.development.id;
    const documents: [string, string | undefined][] = [
      [`/v1/environments/${environmentId}/.well-known/jwks.json`, undefined],
      [`/v1/environments/${environmentId}/.well-known/openid-configuration`, undefined],
      ['/v1/jwks', pk()],
    ];
    for (const [url, credential] of documents) {
      const res = await t.call({ method: 'GET', url, ...(credential ? { credential } : {}) });
      expect(res.statusCode, url).toBe(200);
      expectBaseHeaders(res, url);
      expect(res.headers['cache-control'], url).toMatch(/^public, max-age=\d+$/);
      expect(res.headers['content-security-policy'], url).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });

  it('stored images stay immutable and loadable cross-origin by <img>, and are never sniffed', async () => {
    const png = makePng(4, 4, { seed: 77 });
    const ticket = await uploadThroughApi(t, user.accessToken, png, 'image/png', { width: 4, height: 4 });
    const url = new URL(ticket.publicUrl).pathname;
    const image = await t.call({ method: 'GET', url, headers: { origin: 'https://some-app.test' } });
    expect(image.statusCode).toBe(200);
    expectBaseHeaders(image, 'image');
    expect(image.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(image.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(image.headers['content-type']).toBe('image/png');
  });

  it('sends Strict-Transport-Security only when the base URL is https', () => {
    expect(securityHeaders('https://auth.example.com')['strict-transport-security']).toBe('max-age=31536000');
    expect(securityHeaders('http://localhost:3000')['strict-transport-security']).toBeUndefined();
  });
});
