import { crossTenant } from '../../src/db/tenant-scope.js';
import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETIRED_KEY_PUBLISH_MS } from '../../src/sessions/signing-keys.js';
import { BASE_URL, startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, me, refresh, signUp } from '../helpers/identity.js';

const clock = testClock();

/** Verifies a token offline from a JWKS, as an application backend would. */
function verifyOffline(token: string, jwks: { keys: Array<Record<string, any>> }): boolean {
  const [h, p, s] = token.split('.');
  const { header } = decodeJwt(token);
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk || jwk.alg !== header.alg) return false;
  const key = createPublicKey({ key: jwk as any, format: 'jwk' });
  const data = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s!, 'base64url');
  if (header.alg === 'EdDSA') return verify(null, data, key, signature);
  if (header.alg === 'ES256') return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  return verify('sha256', data, key, signature);
}

describe('signing keys, JWKS, discovery and rotation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const envId = () => t.project.development.id;
  const publicJwks = async (id = envId()) => t.call({ method: 'GET', url: `/v1/environments/${id}/.well-known/jwks.json` });

  it('publishes the JWKS without a credential, cacheable, with no private parts', async () => {
    const user = await signUp(t);
    const response = await publicJwks();
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toMatch(/public, max-age=\d+/);
    const jwks = json(response);
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: decodeJwt(user.accessToken).header.kid });
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(secret);
    expect(verifyOffline(user.accessToken, jwks)).toBe(true);
    expect((await publicJwks('env_unknown')).statusCode).toBe(404);
  });

  it('serves the discovery document and GET /v1/jwks with PK or SK', async () => {
    const discovery = await t.call({ method: 'GET', url: `/v1/environments/${envId()}/.well-known/openid-configuration` });
    expect(discovery.statusCode).toBe(200);
    expect(discovery.headers['cache-control']).toMatch(/public/);
    const issuer = `${BASE_URL}/v1/environments/${envId()}`;
    expect(json(discovery)).toMatchObject({ issuer, jwks_uri: `${issuer}/.well-known/jwks.json` });

    const expected = json(await publicJwks());
    for (const credential of [t.project.development.publishableKey, t.project.development.secretKey]) {
      const response = await t.call({ method: 'GET', url: '/v1/jwks', credential });
      expect(response.statusCode).toBe(200);
      expect(json(response)).toEqual(expected);
    }
    expect((await t.call({ method: 'GET', url: '/v1/jwks' })).statusCode).toBe(401);
  });

  it('stores private keys encrypted', async () => {
    const rows = await t.store.db.selectFrom('signing_keys').select(['private_key']).modifyEnd(crossTenant('test: every stored key')).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.private_key).toMatch(/^v1\./);
      expect(row.private_key).not.toContain('PRIVATE KEY');
    }
  });

  it('rotates: new tokens use the new key, old tokens keep working, the old key stays published until they expire', async () => {
    const before = await signUp(t);
    const oldKid = decodeJwt(before.accessToken).header.kid;
    const rotate = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${envId()}/signing-keys/rotate`,
      credential: t.platformKey,
    });
    expect(rotate.statusCode).toBe(201);
    const newKid = json(rotate).kid;
    expect(newKid).not.toBe(oldKid);

    const after = json(await refresh(t, before.refreshToken)).session;
    expect(decodeJwt(after.accessToken).header.kid).toBe(newKid);
    expect((await me(t, before.accessToken)).statusCode).toBe(200);
    expect((await me(t, after.accessToken)).statusCode).toBe(200);

    const jwks = json(await publicJwks());
    expect(jwks.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([newKid, oldKid].sort());
    expect(verifyOffline(before.accessToken, jwks)).toBe(true);
    expect(verifyOffline(after.accessToken, jwks)).toBe(true);

    clock.advance(RETIRED_KEY_PUBLISH_MS + 1);
    const later = json(await publicJwks());
    expect(later.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid]);

    const refused = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${envId()}/signing-keys/rotate`,
      credential: t.project.development.secretKey,
    });
    expect(refused.statusCode).toBe(403);
  });

  it.each([
    ['ES256', 'EC'],
    ['EdDSA', 'OKP'],
  ] as const)('signs with %s when the environment chooses it', async (algorithm, kty) => {
    const project = await t.createProject(`alg-${algorithm}`);
    await t.setSettings(project.development.id, { tokenAlgorithm: algorithm });
    const user = await signUp(t, { environment: project.development });
    expect(decodeJwt(user.accessToken).header).toMatchObject({ alg: algorithm, typ: 'at+jwt' });
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
    const jwks = json(await publicJwks(project.development.id));
    expect(jwks.keys[0]).toMatchObject({ kty, alg: algorithm });
    expect(verifyOffline(user.accessToken, jwks)).toBe(true);

    // Switching back to RS256 keeps earlier tokens valid: each is pinned to its own key's algorithm.
    await t.setSettings(project.development.id, { tokenAlgorithm: 'RS256' });
    const next = json(await refresh(t, user.refreshToken, project.development)).session;
    expect(decodeJwt(next.accessToken).header.alg).toBe('RS256');
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
    expect((await me(t, next.accessToken)).statusCode).toBe(200);
  });
});
