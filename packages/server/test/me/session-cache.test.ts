import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { decodeJwt, GOOD_PASSWORD, json, me, refresh, signIn, signUp } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person } from '../helpers/organizations.js';
import { REDIS_URL, testPrefix } from '../helpers/redis.js';
import { testDb } from '../helpers/store.js';

/**
 * With REDIS_URL set these suites run with Redis, so that on PostgreSQL too the cache is serving;
 * without Redis a PostgreSQL node caches no sessions and only SQLite exercises the cache here.
 */
const redis = () => (REDIS_URL ? { redis: { url: REDIS_URL, prefix: testPrefix() } } : {});
const cached = testDb() === 'sqlite' || REDIS_URL !== undefined;

/**
 * GET /v1/me is served from a per-node cache of sessions and organization lists (on SQLite, and
 * with Redis). Each test warms the cache with GET /v1/me, changes something through the API, and
 * expects the very next request to see the change.
 */
describe(`GET /v1/me after a change: the cached session and lists are never stale (${cached ? 'cache serving' : 'no cache: PostgreSQL without REDIS_URL'})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(redis());
  });
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;
  const platform = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.call({ method, url, credential: t.platformKey, ...(payload ? { payload } : {}) });
  async function warm(accessToken: string) {
    for (let i = 0; i < 2; i++) expect((await me(t, accessToken)).statusCode).toBe(200);
  }
  const errorCode = async (accessToken: string) => json(await me(t, accessToken)).error?.code;

  it('is served from the cache: a write that bypasses the query functions goes unseen', async () => {
    // The reason every write to a cached table announces itself (test/unit/announcing-writers.test.ts).
    // Without Redis a PostgreSQL node caches nothing, so there the write is seen at once.
    const user = await signUp(t);
    await warm(user.accessToken);
    await sql`update users set first_name = 'Unannounced' where id = ${user.userId}`.execute(t.store.db);
    const firstName = json(await me(t, user.accessToken)).user.firstName;
    expect(firstName).toBe(cached ? null : 'Unannounced');
  });

  it('refuses a session at once after sign-out, revocation of one session, or by an administrator', async () => {
    const user = await signUp(t);
    const second = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    const third = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    for (const token of [user.accessToken, second.accessToken, third.accessToken]) await warm(token);

    const signout = await t.call({
      method: 'POST',
      url: '/v1/auth/signout',
      credential: t.project.development.publishableKey,
      payload: { refreshToken: second.refreshToken },
    });
    expect(signout.statusCode).toBe(204);
    expect(await errorCode(second.accessToken)).toBe('session_revoked');

    const sid = decodeJwt(third.accessToken).payload.sid;
    expect((await t.call({ method: 'DELETE', url: `/v1/me/sessions/${sid}`, credential: user.accessToken })).statusCode).toBe(204);
    expect(await errorCode(third.accessToken)).toBe('session_revoked');

    await warm(user.accessToken);
    const revoked = await t.call({ method: 'POST', url: `/v1/users/${user.userId}/sessions/revoke`, credential: sk() });
    expect(revoked.statusCode).toBe(200);
    expect(await errorCode(user.accessToken)).toBe('session_revoked');
  });

  it('refuses the other sessions at once after a password change, and every session after deletion', async () => {
    const user = await signUp(t);
    const other = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    await warm(user.accessToken);
    await warm(other.accessToken);
    const changed = await t.call({
      method: 'POST',
      url: '/v1/me/password',
      credential: user.accessToken,
      payload: { currentPassword: GOOD_PASSWORD, newPassword: 'a different battery staple' },
    });
    expect(json(changed)).toEqual({ changed: true, otherSessionsRevoked: 1 });
    expect(await errorCode(other.accessToken)).toBe('session_revoked');
    await warm(user.accessToken);

    expect((await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}`, credential: sk() })).statusCode).toBe(200);
    expect((await me(t, user.accessToken)).statusCode).toBe(401);
  });

  it('refuses every session at once after a password reset by email', async () => {
    const user = await signUp(t);
    await warm(user.accessToken);
    expect((await start(t, 'password-reset', { email: user.email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const token = tokenFrom((await outbox(t, user.email))[0]!);
    const completed = await start(t, 'password-reset/complete', { token, newPassword: 'a different battery staple' });
    expect(completed.statusCode, completed.body).toBe(200);
    expect(await errorCode(user.accessToken)).toBe('session_revoked');
  });

  it('shows a profile change at once, made by the user or by an administrator', async () => {
    const user = await signUp(t);
    await warm(user.accessToken);
    await t.call({ method: 'PATCH', url: '/v1/me', credential: user.accessToken, payload: { firstName: 'Grace' } });
    expect(json(await me(t, user.accessToken)).user.firstName).toBe('Grace');
    await t.call({ method: 'PATCH', url: `/v1/users/${user.userId}`, credential: sk(), payload: { lastName: 'Hopper' } });
    expect(json(await me(t, user.accessToken)).user).toMatchObject({ firstName: 'Grace', lastName: 'Hopper' });
  });

  it('shows membership, organization and role changes at once', async () => {
    const owner = await person(t, undefined, 'owner');
    const member = await person(t, undefined, 'member');
    await warm(member.accessToken);
    const org = await createOrg(t, owner.userId, { name: 'Cached Co' });
    await addMember(t, org.id, member.userId, 'member');
    const listed = () => me(t, member.accessToken).then((r) => json(r).organizations);
    expect(await listed()).toMatchObject([{ id: org.id, name: 'Cached Co', role: 'member' }]);

    await t.call({ method: 'PATCH', url: `/v1/organizations/${org.id}`, credential: sk(), payload: { name: 'Renamed Co' } });
    expect(await listed()).toMatchObject([{ id: org.id, name: 'Renamed Co', role: 'member' }]);

    const environment = t.project.development.id;
    const created = await platform('POST', `/v1/platform/environments/${environment}/roles`, {
      key: 'cache_probe',
      name: 'Cache probe',
      permissions: ['org:billing:read'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const promoted = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${member.userId}`,
      credential: sk(),
      payload: { role: 'cache_probe' },
    });
    expect(promoted.statusCode, promoted.body).toBe(200);
    expect(await listed()).toMatchObject([{ id: org.id, role: 'cache_probe', permissions: ['org:billing:read'] }]);

    await platform('PATCH', `/v1/platform/environments/${environment}/roles/cache_probe`, { permissions: ['org:billing:manage'] });
    expect(await listed()).toMatchObject([{ id: org.id, permissions: ['org:billing:manage'] }]);

    await actAs(t, member, org.id);
    await warm(member.accessToken);
    expect(json(await me(t, member.accessToken)).organization).toMatchObject({ id: org.id });

    expect(
      (await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}/members/${member.userId}`, credential: sk() })).statusCode,
    ).toBe(200);
    expect(json(await me(t, member.accessToken))).toMatchObject({ organizations: [], organization: null });

    await addMember(t, org.id, member.userId, 'member');
    expect(await listed()).toHaveLength(1);
    expect((await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}`, credential: sk() })).statusCode).toBe(200);
    expect(await listed()).toEqual([]);
  });
});

describe('GET /v1/me after a settings change: the cached environment is never stale', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, ...redis() });
  });
  afterAll(() => t.close());

  it('refuses a session at once when its refresh token is reused after the grace window', async () => {
    const user = await signUp(t);
    const rotated = json(await refresh(t, user.refreshToken)).session;
    for (let i = 0; i < 2; i++) expect((await me(t, rotated.accessToken)).statusCode).toBe(200);
    clock.advance(11_000);
    expect(json(await refresh(t, user.refreshToken)).error.code).toBe('session_revoked');
    expect(json(await me(t, rotated.accessToken)).error.code).toBe('session_revoked');
  });

  it('applies a shorter inactivity timeout to a cached session at once', async () => {
    const environment = t.project.development.id;
    await t.setSettings(environment, { accessTokenTtlSeconds: 3600 });
    const user = await signUp(t);
    clock.advance(301_000);
    for (let i = 0; i < 2; i++) expect((await me(t, user.accessToken)).statusCode).toBe(200);
    await t.setSettings(environment, { sessionInactivitySeconds: 300 });
    const refused = await me(t, user.accessToken);
    expect(refused.statusCode).toBe(401);
    expect(json(refused).error.message).toMatch(/inactive too long/);
  });

  it('keeps a refreshed session alive past the cached copy\'s inactivity limit (rotations are not announced)', async () => {
    const environment = t.project.development.id;
    await t.setSettings(environment, { accessTokenTtlSeconds: 3600, sessionInactivitySeconds: 300 });
    const user = await signUp(t);
    clock.advance(200_000);
    for (let i = 0; i < 2; i++) expect((await me(t, user.accessToken)).statusCode).toBe(200);
    const rotated = json(await refresh(t, user.refreshToken)).session;
    // 350 s after sign-up, 150 s after the refresh: the copy cached before the refresh looks
    // inactive, the row does not.
    clock.advance(150_000);
    for (const token of [user.accessToken, rotated.accessToken]) expect((await me(t, token)).statusCode).toBe(200);
    // And a session that really went inactive is still refused.
    clock.advance(301_000);
    const refused = await me(t, rotated.accessToken);
    expect(refused.statusCode).toBe(401);
    expect(json(refused).error.message).toMatch(/inactive too long/);
  });
});
