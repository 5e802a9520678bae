import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json, me } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, type Person } from '../helpers/organizations.js';

/** Attacks on API keys: another subject, a member without org:manage, expiry, another environment, a key as a session. */
describe('API keys security', { timeout: 30_000 }, () => {
  let t: TestApp;
  let alice: Person;
  let mallory: Person;
  const clock = testClock();
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    alice = await person(t, undefined, 'alice');
    mallory = await person(t, undefined, 'mallory');
  }, 60_000);
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;
  const verify = (secret: string, secretKey = sk()) =>
    t.call({ method: 'POST', url: '/v1/api-keys/verify', credential: secretKey, payload: { secret } });
  const ownKey = async (who: Person, payload: Record<string, unknown> = { name: 'mine' }) => {
    const response = await t.call({ method: 'POST', url: '/v1/me/api-keys', credential: who.accessToken, payload });
    expect(response.statusCode, response.body).toBe(201);
    return json<{ apiKey: { id: string; subject: string }; secret: string }>(response);
  };

  it("a session's body cannot choose the subject (CVE-2025-61928): a key for another user is refused, not minted", async () => {
    for (const url of ['/v1/me/api-keys', '/v1/me/organization/api-keys']) {
      for (const field of ['subject', 'userId', 'organizationId']) {
        const response = await t.call({
          method: 'POST',
          url,
          credential: mallory.accessToken,
          payload: { name: 'stolen', [field]: alice.userId },
        });
        expect(response.statusCode, `${url} ${field}: ${response.body}`).toBe(400);
      }
    }
    const listed = json(await t.call({ method: 'GET', url: `/v1/api-keys?subject=${alice.userId}`, credential: sk() })).data;
    expect(listed.filter((k: { name: string }) => k.name === 'stolen')).toEqual([]);
    // The subject of a key made on the session surface is always the caller.
    expect((await ownKey(mallory)).apiKey.subject).toBe(mallory.userId);
  });

  it("a user cannot list or revoke another user's key", async () => {
    const { apiKey, secret } = await ownKey(alice);
    const listed = json(await t.call({ method: 'GET', url: '/v1/me/api-keys', credential: mallory.accessToken })).data;
    expect(listed.map((k: { id: string }) => k.id)).not.toContain(apiKey.id);
    const revoked = await t.call({ method: 'DELETE', url: `/v1/me/api-keys/${apiKey.id}`, credential: mallory.accessToken });
    expect(revoked.statusCode).toBe(404);
    expect((await verify(secret)).statusCode).toBe(200);
  });

  it('an organization key needs org:manage in the live membership, not in the token', async () => {
    const org = await createOrg(t, alice.userId, { name: 'Guarded' });
    await addMember(t, org.id, mallory.userId, 'admin');
    await actAs(t, mallory, org.id);
    await actAs(t, alice, org.id);
    const made = await t.call({
      method: 'POST',
      url: '/v1/me/organization/api-keys',
      credential: mallory.accessToken,
      payload: { name: 'as admin' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { apiKey } = json(made);

    // Demoted: the token still says admin, the membership says member.
    const demoted = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${mallory.userId}`,
      credential: sk(),
      payload: { role: 'member' },
    });
    expect(demoted.statusCode, demoted.body).toBe(200);
    for (const [method, url] of [
      ['POST', '/v1/me/organization/api-keys'],
      ['GET', '/v1/me/organization/api-keys'],
      ['DELETE', `/v1/me/organization/api-keys/${apiKey.id}`],
    ] as const) {
      const response = await t.call({
        method,
        url,
        credential: mallory.accessToken,
        ...(method === 'POST' ? { payload: { name: 'as member' } } : {}),
      });
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(403);
      expect(json(response).error.code).toBe('forbidden');
    }
    // Removed: no membership at all.
    expect(
      (await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}/members/${mallory.userId}`, credential: sk() })).statusCode,
    ).toBe(200);
    const removed = await t.call({
      method: 'POST',
      url: '/v1/me/organization/api-keys',
      credential: mallory.accessToken,
      payload: { name: 'gone' },
    });
    expect(removed.statusCode).toBe(403);
    // A user's own key never names an organization, whatever the session acts as.
    expect((await ownKey(alice)).apiKey.subject).toBe(alice.userId);
    const orgKeys = json(await t.call({ method: 'GET', url: `/v1/api-keys?subject=${org.id}`, credential: sk() })).data;
    expect(orgKeys.map((k: { id: string }) => k.id)).toEqual([apiKey.id]);
  });

  it('an expired key, a revoked key and an unknown key get the same answer', async () => {
    const expiring = await ownKey(alice, { name: 'expiring', expiresInSeconds: 60 });
    const revoked = await ownKey(alice, { name: 'revoked' });
    expect((await verify(expiring.secret)).statusCode).toBe(200);
    expect((await verify(revoked.secret)).statusCode).toBe(200);
    clock.advance(61_000);
    expect(
      (await t.call({ method: 'DELETE', url: `/v1/me/api-keys/${revoked.apiKey.id}`, credential: alice.accessToken })).statusCode,
    ).toBe(200);
    const unknown = `gh_ak_${'A'.repeat(43)}`;
    // The same lookup part as a real key, with another ending: found, compared, refused.
    const forged = revoked.secret.slice(0, -4) + (revoked.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const live = await ownKey(alice, { name: 'live' });
    const forgedLive = live.secret.slice(0, -4) + (live.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const answers = await Promise.all(
      [expiring.secret, revoked.secret, unknown, forged, forgedLive, 'gh_ak_short', 'sk_test_nope'].map((s) => verify(s)),
    );
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(401);
      expect(answer.body).toBe(answers[0]!.body);
    }
    expect(json(answers[0]!).error.code).toBe('unauthenticated');
    expect((await verify(live.secret)).statusCode).toBe(200);
  });

  it("a key of another environment is unknown to this one's secret key", async () => {
    const { secret } = await ownKey(alice);
    expect((await verify(secret)).statusCode).toBe(200);
    const other = await t.createProject('Elsewhere');
    for (const secretKey of [t.project.production.secretKey, other.development.secretKey]) {
      const response = await verify(secret, secretKey);
      expect(response.statusCode).toBe(401);
      expect(json(response).error.code).toBe('unauthenticated');
    }
    // Nor can another environment's secret key revoke or list it.
    const id = json(await t.call({ method: 'GET', url: '/v1/me/api-keys', credential: alice.accessToken })).data[0].id;
    expect((await t.call({ method: 'DELETE', url: `/v1/api-keys/${id}`, credential: other.development.secretKey })).statusCode).toBe(404);
    expect(
      json(await t.call({ method: 'GET', url: `/v1/api-keys?subject=${alice.userId}`, credential: other.development.secretKey })).data,
    ).toEqual([]);
    expect((await verify(secret)).statusCode).toBe(200);
  });

  it('a key used as a session token, or as a secret key, is refused', async () => {
    const { secret } = await ownKey(alice);
    for (const url of ['/v1/me', '/v1/me/api-keys', '/v1/me/sessions']) {
      const response = await t.call({ method: 'GET', url, credential: secret });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(401);
    }
    expect((await t.call({ method: 'GET', url: '/v1/users', credential: secret })).statusCode).toBe(401);
    expect((await t.call({ method: 'POST', url: '/v1/api-keys/verify', credential: secret, payload: { secret } })).statusCode).toBe(401);
    // The session itself still works.
    expect((await me(t, alice.accessToken)).statusCode).toBe(200);
  });

  it('verifying takes the secret key only: a session or a publishable key cannot probe keys', async () => {
    const { secret } = await ownKey(alice);
    for (const credential of [alice.accessToken, t.project.development.publishableKey]) {
      const response = await t.call({ method: 'POST', url: '/v1/api-keys/verify', credential, payload: { secret } });
      expect(response.statusCode).toBe(403);
      expect(json(response).error.code).toBe('credential_not_accepted');
    }
  });
});
