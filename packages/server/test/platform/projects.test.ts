import { crossTenant } from '../../src/db/tenant-scope.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('platform API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const platform = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.call({ method, url, credential: t.platformKey, ...(payload ? { payload } : {}) });

  it('creates a project with a development and a production environment, showing secret keys once', async () => {
    const res = await platform('POST', '/v1/platform/projects', { name: 'Acme', domain: 'Acme.Test' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.id).toMatch(/^proj_/);
    expect(body.domain).toBe('acme.test');
    expect(body.environments).toHaveLength(2);
    const [dev, prod] = [...body.environments].sort((a, b) => a.type.localeCompare(b.type));
    expect(dev).toMatchObject({
      type: 'development',
      publishableKey: expect.stringMatching(/^pk_test_/),
      secretKey: expect.stringMatching(/^sk_test_/),
    });
    expect(prod).toMatchObject({
      type: 'production',
      publishableKey: expect.stringMatching(/^pk_live_/),
      secretKey: expect.stringMatching(/^sk_live_/),
    });

    const read = await platform('GET', `/v1/platform/projects/${body.id}`);
    expect(read.statusCode).toBe(200);
    expect(JSON.stringify(read.json())).not.toContain(dev.secretKey);
    expect(
      read
        .json()
        .environments.map((e: { type: string }) => e.type)
        .sort(),
    ).toEqual(['development', 'production']);
  });

  it('stores secret keys only as hashes', async () => {
    const rows = await t.store.db.selectFrom('secret_keys').selectAll().modifyEnd(crossTenant('test: every stored key')).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(t.project.development.secretKey);
    }
  });

  it('gives both environments the documented defaults', async () => {
    const res = await platform('GET', `/v1/platform/projects/${t.project.id}`);
    const byType = Object.fromEntries(res.json().environments.map((e: { type: string }) => [e.type, e]));
    for (const env of Object.values(byType) as Record<string, unknown>[]) {
      expect(env).toMatchObject({
        callbackOrigins: [],
        authMethods: { password: true, magicLink: true, emailCode: true, sso: false, passkey: false },
        signUp: true,
        accessTokenTtlSeconds: 300,
        tokenAlgorithm: 'RS256',
        rateLimitPerMinute: null,
      });
    }
    expect(byType.development.rateLimit.requestsPerMinute).toBe(1000);
    expect(byType.production.rateLimit.requestsPerMinute).toBe(6000);
  });

  it('refuses a domain that is not a bare host name', async () => {
    for (const domain of ['https://acme.test', 'acme.test/path', 'localhost', 'a..b.test']) {
      const res = await platform('POST', '/v1/platform/projects', { name: 'Bad', domain });
      expect(res.statusCode, domain).toBe(400);
      expect(res.json().error.details.fields).toEqual(['domain']);
    }
  });

  it('refuses a project without a name', async () => {
    const res = await platform('POST', '/v1/platform/projects', { domain: 'x.test' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.fields).toEqual(['name']);
  });

  it('changes settings, leaving omitted ones as they were', async () => {
    const url = `/v1/platform/environments/${t.project.production.id}`;
    const res = await platform('PATCH', url, {
      callbackOrigins: ['HTTPS://App.Partner.test:443', 'http://localhost:8080'],
      authMethods: { magicLink: false },
      signUp: false,
      accessTokenTtlSeconds: 600,
      tokenAlgorithm: 'ES256',
      rateLimitPerMinute: 120,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      domain: 'example.test',
      callbackOrigins: ['https://app.partner.test', 'http://localhost:8080'],
      authMethods: { password: true, magicLink: false, emailCode: true, sso: false, passkey: false },
      signUp: false,
      accessTokenTtlSeconds: 600,
      tokenAlgorithm: 'ES256',
      rateLimitPerMinute: 120,
      rateLimit: { requestsPerMinute: 120 },
    });
    const environment = await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.production.publishableKey });
    expect(environment.json()).toMatchObject({ rateLimit: { requestsPerMinute: 120 }, signUp: false, authMethods: { magicLink: false } });

    const reset = await platform('PATCH', url, { rateLimitPerMinute: null, domain: null });
    expect(reset.json()).toMatchObject({ rateLimitPerMinute: null, rateLimit: { requestsPerMinute: 6000 }, domain: null, signUp: false });
  });

  it.each([
    [{ accessTokenTtlSeconds: 29 }, 'accessTokenTtlSeconds'],
    [{ accessTokenTtlSeconds: 3601 }, 'accessTokenTtlSeconds'],
    [{ tokenAlgorithm: 'HS256' }, 'tokenAlgorithm'],
    [{ tokenAlgorithm: 'none' }, 'tokenAlgorithm'],
    [{ callbackOrigins: ['https://app.test/callback'] }, 'callbackOrigins'],
    [{ callbackOrigins: ['null'] }, 'callbackOrigins'],
    [{ rateLimitPerMinute: 0 }, 'rateLimitPerMinute'],
    [{ authMethods: { passkeys: true } }, 'authMethods.passkeys'],
  ])('refuses the setting %j', async (patch, field) => {
    const res = await platform('PATCH', `/v1/platform/environments/${t.project.development.id}`, patch);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    expect(JSON.stringify(res.json().error.details.fields)).toContain(field.split('.')[0]);
  });

  it('answers 404 for an unknown environment or project', async () => {
    expect((await platform('PATCH', '/v1/platform/environments/env_nope', { signUp: true })).statusCode).toBe(404);
    expect((await platform('GET', '/v1/platform/projects/proj_nope')).statusCode).toBe(404);
    expect((await platform('POST', '/v1/platform/environments/env_nope/secret-keys')).statusCode).toBe(404);
  });

  it('keeps several secret keys per environment, lists them without values, and revokes one', async () => {
    const url = `/v1/platform/environments/${t.project.development.id}/secret-keys`;
    const a = (await platform('POST', url)).json();
    const b = (await platform('POST', url)).json();
    expect(a.secretKey).toMatch(/^sk_test_/);
    expect(a.hint).toBe(a.secretKey.slice(-4));
    const list = (await platform('GET', url)).json().data;
    expect(list.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(JSON.stringify(list)).not.toContain(a.secretKey);
    expect((await platform('DELETE', `${url}/${a.id}`)).statusCode).toBe(204);
    const after = (await platform('GET', url)).json().data;
    expect(after.find((k: { id: string }) => k.id === a.id).revokedAt).toEqual(expect.any(Number));
    expect(await t.tenancy.resolveSecretKey(b.secretKey)).toBeDefined();
    expect(await t.tenancy.resolveSecretKey(a.secretKey)).toBeUndefined();
  });

  it('cannot revoke one environment’s key through another environment', async () => {
    const url = `/v1/platform/environments/${t.project.development.id}/secret-keys`;
    const key = (await platform('POST', url)).json();
    const res = await platform('DELETE', `/v1/platform/environments/${t.project.production.id}/secret-keys/${key.id}`);
    expect(res.statusCode).toBe(404);
    expect(await t.tenancy.resolveSecretKey(key.secretKey)).toBeDefined();
  });

  it('paginates projects with opaque, tamper-checked cursors', async () => {
    for (let i = 0; i < 3; i++) await platform('POST', '/v1/platform/projects', { name: `Paged ${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await platform('GET', `/v1/platform/projects?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((p: { id: string }) => p.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(await t.tenancy.countProjects());

    const first = (await platform('GET', '/v1/platform/projects?limit=1')).json().nextCursor as string;
    const [payload, mac] = first.split('.');
    const forged = `${Buffer.from(JSON.stringify({ after: '' })).toString('base64url')}.${mac}`;
    for (const bad of [forged, `${payload}.AAAA`, 'garbage', `${first}.extra`]) {
      const res = await platform('GET', `/v1/platform/projects?cursor=${encodeURIComponent(bad)}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.details.fields).toEqual(['cursor']);
    }
  });
});
