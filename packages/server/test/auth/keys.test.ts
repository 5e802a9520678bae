import { crossTenant } from '../../src/db/tenant-scope.js';
import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_ACTIVATION_DELAY_MS, RETIRED_KEY_PUBLISH_MS } from '../../src/sessions/key-schedule.js';
import { openSharedTestStores } from '../helpers/store.js';
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
  const publicJwks = async (id: string = envId()) => t.call({ method: 'GET', url: `/v1/environments/${id}/.well-known/jwks.json` });

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

  const rotate = (body?: Record<string, unknown>, id = envId(), app = t) =>
    app.call({
      method: 'POST',
      url: `/v1/platform/environments/${id}/signing-keys/rotate`,
      credential: app.platformKey,
      ...(body === undefined ? {} : { payload: body }),
    });
  const listKeys = async (id = envId(), app = t) =>
    json(await app.call({ method: 'GET', url: `/v1/platform/environments/${id}/signing-keys`, credential: app.platformKey })).data as Array<
      Record<string, any>
    >;
  const kids = (jwks: { keys: Array<{ kid: string }> }) => jwks.keys.map((k) => k.kid).sort();

  it('rotates in two steps: the next key is published at once and signs only after the activation delay', async () => {
    const before = await signUp(t);
    const oldKid = decodeJwt(before.accessToken).header.kid;
    const rotatedAt = clock.now();
    const rotated = await rotate();
    expect(rotated.statusCode).toBe(201);
    const next = json(rotated);
    expect(next).toMatchObject({ state: 'pending', activatesAt: rotatedAt + KEY_ACTIVATION_DELAY_MS, retiredAt: null, publishUntil: null });
    expect(next.kid).not.toBe(oldKid);
    expect(KEY_ACTIVATION_DELAY_MS).toBe(360_000); // max-age 300 s + jose's 30 s cooldown + 30 s margin

    // Published before it signs, on every JWKS route.
    expect(kids(json(await publicJwks()))).toEqual([next.kid, oldKid].sort());
    expect(kids(json(await t.call({ method: 'GET', url: '/v1/jwks', credential: t.project.development.secretKey })))).toEqual(
      [next.kid, oldKid].sort(),
    );
    expect(await listKeys()).toEqual([
      expect.objectContaining({ kid: next.kid, state: 'pending', activatesAt: next.activatesAt }),
      expect.objectContaining({
        kid: oldKid,
        state: 'active',
        retiredAt: next.activatesAt,
        publishUntil: next.activatesAt + RETIRED_KEY_PUBLISH_MS,
      }),
    ]);

    // A second rotation while one is pending changes nothing and answers with the pending key.
    const again = await rotate({});
    expect(again.statusCode).toBe(200);
    expect(json(again)).toEqual(next);

    expect((await me(t, before.accessToken)).statusCode).toBe(200);

    // Until the activation, the old key still signs.
    clock.advance(KEY_ACTIVATION_DELAY_MS - 1);
    const during = json(await refresh(t, before.refreshToken)).session;
    expect(decodeJwt(during.accessToken).header.kid).toBe(oldKid);

    clock.advance(1);
    const after = json(await refresh(t, during.refreshToken)).session;
    expect(decodeJwt(after.accessToken).header.kid).toBe(next.kid);
    for (const token of [during.accessToken, after.accessToken]) expect((await me(t, token)).statusCode).toBe(200);
    const jwks = json(await publicJwks());
    expect(kids(jwks)).toEqual([next.kid, oldKid].sort());
    for (const token of [before.accessToken, during.accessToken, after.accessToken]) expect(verifyOffline(token, jwks)).toBe(true);
    expect(await listKeys()).toEqual([
      expect.objectContaining({ kid: next.kid, state: 'active', retiredAt: null }),
      expect.objectContaining({ kid: oldKid, state: 'retired', retiredAt: next.activatesAt }),
    ]);

    // The old key stays published until every token it signed has expired.
    clock.advance(RETIRED_KEY_PUBLISH_MS - 1);
    expect(kids(json(await publicJwks()))).toEqual([next.kid, oldKid].sort());
    clock.advance(1);
    expect(kids(json(await publicJwks()))).toEqual([next.kid]);

    const refused = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${envId()}/signing-keys/rotate`,
      credential: t.project.development.secretKey,
    });
    expect(refused.statusCode).toBe(403);
  });

  it('rotates at once when asked for an emergency rotation, replacing a pending key', async () => {
    const project = await t.createProject('emergency');
    const environment = project.development;
    const user = await signUp(t, { environment });
    const oldKid = decodeJwt(user.accessToken).header.kid;
    const pending = json(await rotate(undefined, environment.id));
    expect(pending.state).toBe('pending');

    const at = clock.now();
    const emergency = await rotate({ immediate: true }, environment.id);
    expect(emergency.statusCode).toBe(201);
    const key = json(emergency);
    expect(key).toMatchObject({ state: 'active', createdAt: at, activatesAt: at, retiredAt: null });
    expect([oldKid, pending.kid]).not.toContain(key.kid);

    // The very next token is signed with it, and the earlier token still verifies.
    const next = json(await refresh(t, user.refreshToken, environment)).session;
    expect(decodeJwt(next.accessToken).header.kid).toBe(key.kid);
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
    const jwks = json(await publicJwks(environment.id));
    expect(verifyOffline(user.accessToken, jwks)).toBe(true);
    expect(verifyOffline(next.accessToken, jwks)).toBe(true);

    // The replaced pending key never signs; like the previous key, it is retired and published a while.
    const keys = await listKeys(environment.id);
    expect(keys.find((k) => k.kid === pending.kid)).toMatchObject({ state: 'retired', retiredAt: at });
    expect(keys.find((k) => k.kid === oldKid)).toMatchObject({
      state: 'retired',
      retiredAt: at,
      publishUntil: at + RETIRED_KEY_PUBLISH_MS,
    });
    clock.advance(KEY_ACTIVATION_DELAY_MS);
    const later = json(await refresh(t, next.refreshToken, environment)).session;
    expect(decodeJwt(later.accessToken).header.kid).toBe(key.kid);
  });

  it('refuses a rotate body it does not understand', async () => {
    for (const body of [{ immediate: 'yes' }, { immediately: true }]) {
      const response = await rotate(body);
      expect(response.statusCode).toBe(400);
      expect(json(response).error.code).toBe('invalid_request');
    }
  });

  it('drops a pending change of algorithm when the setting goes back before it activates', async () => {
    const project = await t.createProject('alg-back');
    const environment = project.development;
    const user = await signUp(t, { environment });
    const rsaKid = decodeJwt(user.accessToken).header.kid;
    await t.setSettings(environment.id, { tokenAlgorithm: 'ES256' });
    const during = json(await refresh(t, user.refreshToken, environment)).session;
    expect(decodeJwt(during.accessToken).header.kid).toBe(rsaKid);
    const pending = (await listKeys(environment.id)).find((k) => k.state === 'pending');
    expect(pending).toMatchObject({ algorithm: 'ES256' });

    await t.setSettings(environment.id, { tokenAlgorithm: 'RS256' });
    const back = json(await refresh(t, during.refreshToken, environment)).session;
    const keys = await listKeys(environment.id);
    expect(keys.find((k) => k.kid === pending!.kid)).toMatchObject({ state: 'retired' });
    expect(keys.find((k) => k.kid === rsaKid)).toMatchObject({ state: 'active', retiredAt: null, publishUntil: null });
    clock.advance(KEY_ACTIVATION_DELAY_MS);
    const later = json(await refresh(t, back.refreshToken, environment)).session;
    expect(decodeJwt(later.accessToken).header.kid).toBe(rsaKid);
  });

  it('settles racing rotations on several nodes on one pending key', async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    const shared = { now: clock.now, platformKey: t.platformKey, instanceSecret: t.instanceSecret };
    const a = await startTestApp({ ...shared, store: storeA! });
    const b = await startTestApp({ ...shared, store: storeB! });
    try {
      const environment = a.project.development;
      await signUp(a, { environment });
      const answers = await Promise.all([a, b, a, b].map((node) => rotate(undefined, environment.id, node)));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 201]);
      expect(new Set(answers.map((r) => json(r).kid)).size).toBe(1);
      const states = (await listKeys(environment.id, b)).map((k) => k.state);
      expect(states).toEqual(['pending', 'active']);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('switches every node at the stored activation time, not when each learns of the rotation', async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    const shared = { now: clock.now, platformKey: t.platformKey, instanceSecret: t.instanceSecret };
    const a = await startTestApp({ ...shared, store: storeA! });
    const b = await startTestApp({ ...shared, store: storeB! });
    try {
      const environment = a.project.development;
      const user = await signUp(b, { environment });
      const oldKid = decodeJwt(user.accessToken).header.kid;
      // B now has the current key cached; the rotation happens on A.
      const next = json(await rotate(undefined, environment.id, a));
      let token = user.refreshToken;
      const signedBy = async (node: TestApp) => {
        const response = await refresh(node, token, environment);
        expect(response.statusCode, response.body).toBe(200);
        const session = json(response).session;
        token = session.refreshToken;
        return decodeJwt(session.accessToken).header.kid;
      };
      clock.advance(KEY_ACTIVATION_DELAY_MS - 1);
      expect(await signedBy(b)).toBe(oldKid);
      expect(await signedBy(a)).toBe(oldKid);
      clock.advance(1);
      expect(await signedBy(b)).toBe(next.kid);
      expect(await signedBy(a)).toBe(next.kid);
    } finally {
      await b.close();
      await a.close();
    }
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

    // Switching back to RS256 is a staged rotation: the new key is published at once, signs after
    // the delay, and earlier tokens stay valid (each is pinned to its own key's algorithm).
    await t.setSettings(project.development.id, { tokenAlgorithm: 'RS256' });
    const during = json(await refresh(t, user.refreshToken, project.development)).session;
    expect(decodeJwt(during.accessToken).header.alg).toBe(algorithm);
    const published = json(await publicJwks(project.development.id));
    expect(published.keys.map((k: { alg: string }) => k.alg).sort()).toEqual([algorithm, 'RS256'].sort());
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
    expect((await me(t, during.accessToken)).statusCode).toBe(200);
    clock.advance(KEY_ACTIVATION_DELAY_MS);
    const next = json(await refresh(t, during.refreshToken, project.development)).session;
    expect(decodeJwt(next.accessToken).header.alg).toBe('RS256');
    expect(verifyOffline(next.accessToken, published)).toBe(true);
    expect((await me(t, next.accessToken)).statusCode).toBe(200);
  });
});
