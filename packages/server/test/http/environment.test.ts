import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('GET /v1/environment', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('returns the development environment with its 1,000 requests per minute', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.development.publishableKey });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: t.project.development.id,
      type: 'development',
      rateLimit: { requestsPerMinute: 1000 },
      authMethods: { password: true, magicLink: true, emailCode: true, sso: false, passkey: false },
      signUp: true,
      ssoConnections: [],
      emailVerification: 'off',
      mfa: 'optional',
    });
  });

  it('shows the mfa setting, which the platform API sets', async () => {
    const project = await t.createProject('Mfa setting');
    const get = async () =>
      (await t.call({ method: 'GET', url: '/v1/environment', credential: project.development.publishableKey })).json().mfa;
    expect(await get()).toBe('optional');
    const patch = (mfa: unknown) =>
      t.call({ method: 'PATCH', url: `/v1/platform/environments/${project.development.id}`, credential: t.platformKey, payload: { mfa } });
    const changed = await patch('required');
    expect(changed.statusCode).toBe(200);
    expect(changed.json().mfa).toBe('required');
    expect(await get()).toBe('required');
    expect((await patch('sometimes')).statusCode).toBe(400);
    expect(await get()).toBe('required');
  });

  it('returns the production environment with 6,000, or the override', async () => {
    const get = () => t.call({ method: 'GET', url: '/v1/environment', credential: t.project.production.publishableKey });
    expect((await get()).json().rateLimit.requestsPerMinute).toBe(6000);
    await t.setSettings(t.project.production.id, { rateLimitPerMinute: 250, authMethods: { emailCode: false }, signUp: false });
    expect((await get()).json()).toMatchObject({
      type: 'production',
      rateLimit: { requestsPerMinute: 250 },
      authMethods: { emailCode: false, password: true },
      signUp: false,
    });
  });

  it('leaks nothing beyond the documented fields', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.development.publishableKey });
    expect(Object.keys(res.json()).sort()).toEqual(['authMethods', 'emailVerification', 'id', 'mfa', 'rateLimit', 'signUp', 'ssoConnections', 'type']);
  });
});

describe('GET /v1/health', () => {
  it('reports the database, with no credential needed', async () => {
    const t = await startTestApp();
    const ok = await t.call({ method: 'GET', url: '/v1/health' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'ok', database: 'ok' });
    await t.store.close();
    const down = await t.call({ method: 'GET', url: '/v1/health' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 'down', database: 'down' });
    await t.app.close();
  });
});
