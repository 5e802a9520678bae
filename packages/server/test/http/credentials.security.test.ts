import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsPlugin } from '../../src/http/credentials.js';
import { installErrorHandling } from '../../src/http/error-handler.js';
import { ApiError } from '../../src/lib/errors.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/** The credential model: four kinds, never interchangeable, resolved once per request. */
describe('credentials', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const environment = (credential: string | undefined, headers: Record<string, string> = {}) =>
    t.call({ method: 'GET', url: '/v1/environment', ...(credential === undefined ? {} : { credential }), headers });
  const platformProjects = (credential: string | undefined, headers: Record<string, string> = {}) =>
    t.call({ method: 'GET', url: '/v1/platform/projects', ...(credential === undefined ? {} : { credential }), headers });

  it('accepts the right publishable key and resolves its environment', async () => {
    const res = await environment(t.project.development.publishableKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: t.project.development.id, type: 'development' });
    const live = await environment(t.project.production.publishableKey);
    expect(live.json()).toMatchObject({ id: t.project.production.id, type: 'production' });
  });

  it('resolves a publishable key of another project to that project only', async () => {
    const other = await t.createProject('Other project');
    const res = await environment(other.development.publishableKey);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(other.development.id);
    expect(res.json().id).not.toBe(t.project.development.id);
  });

  it('refuses a missing Authorization header with 401 unauthenticated', async () => {
    const res = await environment(undefined);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthenticated');
    expect(res.json().error.message).toContain('Authorization: Bearer');
  });

  it.each([
    ['an empty bearer value', 'Bearer '],
    ['a bare token with no scheme', 'pk_test_abc'],
    ['a Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['two tokens', 'Bearer a b'],
  ])('refuses %s with 401', async (_why, header) => {
    const res = await t.call({ method: 'GET', url: '/v1/environment', headers: { authorization: header } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthenticated');
  });

  it.each([
    ['garbage', 'garbage'],
    ['an unknown publishable key', 'pk_test_doesnotexist0000000000000000'],
    ['a publishable key with a flipped last character', 'FLIP'],
  ])('refuses %s with 401', async (_why, value) => {
    const credential = value === 'FLIP' ? flipLast(t.project.development.publishableKey) : value;
    const res = await environment(credential);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthenticated');
  });

  it("refuses a test key presented as the live environment's key", async () => {
    // Same random part, other prefix: keys are looked up whole, so this is simply unknown.
    const swapped = t.project.production.publishableKey.replace('pk_live_', 'pk_test_');
    expect((await environment(swapped)).statusCode).toBe(401);
    const swappedSecret = t.project.production.secretKey.replace('sk_live_', 'sk_test_');
    const res = await t.call({ method: 'GET', url: '/v1/platform/projects', credential: swappedSecret });
    expect(res.statusCode).toBe(403);
  });

  it('refuses a secret key on the publishable-key surface with 403 credential_not_accepted naming the right credential', async () => {
    const res = await environment(t.project.development.secretKey);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('credential_not_accepted');
    expect(res.json().error.message).toContain('publishable key');
  });

  it('refuses a secret key and a publishable key on the platform surface', async () => {
    for (const credential of [t.project.development.secretKey, t.project.development.publishableKey]) {
      const res = await platformProjects(credential);
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('credential_not_accepted');
      expect(res.json().error.message).toContain('platform key');
    }
  });

  it('refuses the platform key on an environment surface', async () => {
    const res = await environment(t.platformKey);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('credential_not_accepted');
  });

  it('refuses a refresh token used as a bearer credential', async () => {
    const res = await environment('rt_abcdefghijklmnopqrstuvwxyz');
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toContain('/v1/auth/refresh');
  });

  it('refuses the platform key leaked to a web page (sent with an Origin header), saying why', async () => {
    for (const origin of ['https://example.test', 'http://localhost:3000', 'null']) {
      const res = await platformProjects(t.platformKey, { origin });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('credential_not_accepted');
      expect(res.json().error.message).toContain('never be used from a browser');
    }
    // A write is refused before it runs.
    const create = await t.call({
      method: 'POST',
      url: '/v1/platform/projects',
      credential: t.platformKey,
      headers: { origin: 'https://evil.test' },
      payload: { name: 'Made from a page' },
    });
    expect(create.statusCode).toBe(403);
    const list = await platformProjects(t.platformKey);
    expect(list.statusCode).toBe(200);
    expect(JSON.stringify(list.json())).not.toContain('Made from a page');
  });

  it('refuses an unknown platform key', async () => {
    const res = await platformProjects(flipLast(t.platformKey));
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthenticated');
  });

  it('stops accepting a secret key the moment it is revoked', async () => {
    const created = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/secret-keys`,
      credential: t.platformKey,
    });
    expect(created.statusCode).toBe(201);
    const { id, secretKey } = created.json();
    expect(await t.tenancy.resolveSecretKey(secretKey)).toMatchObject({ secretKeyId: id });

    const revoked = await t.call({
      method: 'DELETE',
      url: `/v1/platform/environments/${t.project.development.id}/secret-keys/${id}`,
      credential: t.platformKey,
    });
    expect(revoked.statusCode).toBe(204);
    expect(await t.tenancy.resolveSecretKey(secretKey)).toBeUndefined();

    const again = await t.call({
      method: 'DELETE',
      url: `/v1/platform/environments/${t.project.development.id}/secret-keys/${id}`,
      credential: t.platformKey,
    });
    expect(again.statusCode).toBe(404);
  });
});

/** The plugin on its own, with one probe route per kind, so every surface rule is tested here. */
describe('credential plugin surfaces', () => {
  let t: TestApp;
  let probe: FastifyInstance;
  beforeAll(async () => {
    t = await startTestApp();
    probe = Fastify();
    installErrorHandling(probe);
    await probe.register(credentialsPlugin, {
      tenancy: t.tenancy,
      platformKeyHash: sha256Hex(t.platformKey),
      verifyAccessToken: async () => {
        throw new ApiError('unauthenticated', 'probe verifier refuses every token');
      },
      operators: { environmentId: async () => 'env_operators', isReserved: async () => false },
    });
    for (const kind of ['publishable', 'secret', 'session', 'platform'] as const) {
      probe.get(`/${kind}`, { config: { credentials: [kind] } }, async (request) => ({ kind: request.auth?.kind }));
    }
    await probe.ready();
  });
  afterAll(async () => {
    await probe.close();
    await t.close();
  });

  const hit = (path: string, credential: string, headers: Record<string, string> = {}) =>
    probe.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${credential}`, ...headers } });

  it('accepts a secret key from a backend (no Origin)', async () => {
    const res = await hit('/secret', t.project.development.secretKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ kind: 'secret' });
  });

  it('refuses a secret key sent with an Origin header, saying why', async () => {
    const res = await hit('/secret', t.project.development.secretKey, { origin: 'https://example.test' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('credential_not_accepted');
    expect(res.json().error.message).toContain('never be used from a browser');
  });

  it('refuses a publishable key on the session surface, explaining the risk', async () => {
    const res = await hit('/session', t.project.development.publishableKey);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('credential_not_accepted');
    expect(res.json().error.message).toContain('session access token');
    expect(res.json().error.message).toContain('browser bundle');
  });

  it('hands JWT-shaped bearer values on the session surface to the verifier', async () => {
    const res = await hit('/session', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.');
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toBe('probe verifier refuses every token');
  });

  it('refuses each kind on every other surface with 403, and unknown values with 401', async () => {
    const credentials = {
      publishable: t.project.development.publishableKey,
      secret: t.project.development.secretKey,
      platform: t.platformKey,
    };
    for (const surface of ['publishable', 'secret', 'session', 'platform']) {
      for (const [kind, credential] of Object.entries(credentials)) {
        const res = await hit(`/${surface}`, credential);
        expect(res.statusCode, `${kind} on ${surface}`).toBe(kind === surface ? 200 : 403);
      }
      expect((await hit(`/${surface}`, 'not-a-credential')).statusCode).toBe(401);
    }
  });
});

describe('origin lock over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await t.setSettings(t.project.production.id, { callbackOrigins: ['https://partner.other.test'] });
  });
  afterAll(() => t.close());

  const withOrigin = (origin: string, key = t.project.production.publishableKey) =>
    t.call({ method: 'GET', url: '/v1/environment', credential: key, headers: { origin } });

  it.each([
    'https://example.test.evil.test',
    'null',
    'http://example.test',
    'https://example.test.',
    'https://user@example.test',
    'https://example.test@evil.test',
    'https://evil.test',
    'http://localhost:3000',
  ])('refuses Origin %s with 403 origin_not_allowed', async (origin) => {
    const res = await withOrigin(origin);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('origin_not_allowed');
  });

  it.each(['https://EXAMPLE.test', 'https://App.Example.Test', 'https://example.test:443', 'https://partner.other.test'])(
    'accepts Origin %s',
    async (origin) => {
      expect((await withOrigin(origin)).statusCode).toBe(200);
    },
  );

  it('allows a request with no Origin header', async () => {
    expect((await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.production.publishableKey })).statusCode).toBe(200);
  });

  it('admits loopback origins in development only', async () => {
    expect((await withOrigin('http://localhost:5173', t.project.development.publishableKey)).statusCode).toBe(200);
    expect((await withOrigin('http://localhost:5173')).statusCode).toBe(403);
  });

  it('applies a settings change to the next request', async () => {
    expect((await withOrigin('https://new.partner.test')).statusCode).toBe(403);
    await t.setSettings(t.project.production.id, { callbackOrigins: ['https://new.partner.test'] });
    expect((await withOrigin('https://new.partner.test')).statusCode).toBe(200);
  });
});

function flipLast(value: string): string {
  const last = value.at(-1) === 'A' ? 'B' : 'A';
  return value.slice(0, -1) + last;
}
