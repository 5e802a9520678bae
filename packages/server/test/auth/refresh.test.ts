import { crossTenant } from '../../src/db/tenant-scope.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json, me, refresh, signUp } from '../helpers/identity.js';

const clock = testClock();

describe('POST /v1/auth/refresh and /v1/auth/signout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const signout = (refreshToken: string) =>
    t.call({ method: 'POST', url: '/v1/auth/signout', credential: t.project.development.publishableKey, payload: { refreshToken } });

  it('rotates the refresh token on every use and issues a fresh access token', async () => {
    const user = await signUp(t);
    clock.advance(1000);
    const first = await refresh(t, user.refreshToken);
    expect(first.statusCode).toBe(200);
    const session = json(first).session;
    expect(Object.keys(json(first))).toEqual(['session']);
    expect(session).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^rt_/),
      expiresIn: 300,
      tokenType: 'Bearer',
    });
    expect(session.refreshToken).not.toBe(user.refreshToken);
    expect(session.accessToken).not.toBe(user.accessToken);
    expect((await me(t, session.accessToken)).statusCode).toBe(200);

    clock.advance(20_000);
    const second = await refresh(t, session.refreshToken);
    expect(second.statusCode).toBe(200);
    expect(json(second).session.refreshToken).not.toBe(session.refreshToken);
  });

  it('gives the same successor for a reuse inside the 10 s grace window', async () => {
    const user = await signUp(t);
    const a = await refresh(t, user.refreshToken);
    clock.advance(9_000);
    const b = await refresh(t, user.refreshToken);
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(json(b).session.refreshToken).toBe(json(a).session.refreshToken);
    expect(json(b).session.accessToken).not.toBe(json(a).session.accessToken);
    // Both tabs keep working with the shared successor.
    const next = await refresh(t, json(a).session.refreshToken);
    expect(next.statusCode).toBe(200);
  });

  it('answers racing refreshes with one successor', async () => {
    const user = await signUp(t);
    const responses = await Promise.all([refresh(t, user.refreshToken), refresh(t, user.refreshToken), refresh(t, user.refreshToken)]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(responses.map((r) => json(r).session.refreshToken)).size).toBe(1);
  });

  it('signs out: 204, then the refresh token and access tokens stop working', async () => {
    const user = await signUp(t);
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
    const out = await signout(user.refreshToken);
    expect(out.statusCode).toBe(204);
    expect(out.body).toBe('');
    const again = await refresh(t, user.refreshToken);
    expect(again.statusCode).toBe(401);
    expect(json(again).error.code).toBe('session_revoked');
    const profile = await me(t, user.accessToken);
    expect(profile.statusCode).toBe(401);
    expect(json(profile).error.code).toBe('session_revoked');
    expect((await signout(user.refreshToken)).statusCode).toBe(204);
  });

  it('ends a session after the inactivity timeout and after the absolute lifetime', async () => {
    const project = await t.createProject('lifetimes');
    await t.setSettings(project.development.id, { sessionLifetimeSeconds: 3600, sessionInactivitySeconds: 600 });
    const user = await signUp(t, { environment: project.development });

    clock.advance(599_000);
    const kept = await refresh(t, user.refreshToken, project.development);
    expect(kept.statusCode).toBe(200);
    let token = json(kept).session.refreshToken as string;
    // Refreshing every 9 minutes keeps it active, up to the absolute lifetime.
    for (let elapsed = 599; elapsed + 540 < 3600; elapsed += 540) {
      clock.advance(540_000);
      const next = await refresh(t, token, project.development);
      expect(next.statusCode).toBe(200);
      token = json(next).session.refreshToken;
    }
    clock.advance(540_000);
    const tooOld = await refresh(t, token, project.development);
    expect(tooOld.statusCode).toBe(401);
    expect(json(tooOld).error).toMatchObject({ code: 'unauthenticated', message: expect.stringMatching(/expired/) });

    const idle = await signUp(t, { environment: project.development });
    clock.advance(601_000);
    const idleRefresh = await refresh(t, idle.refreshToken, project.development);
    expect(idleRefresh.statusCode).toBe(401);
    expect(json(idleRefresh).error.message).toMatch(/expired/);
  });

  it('refuses a refresh token of another environment, an altered one, and garbage with 401', async () => {
    const user = await signUp(t);
    const other = await refresh(t, user.refreshToken, t.project.production);
    expect(other.statusCode).toBe(401);
    expect(json(other).error.code).toBe('unauthenticated');

    const last = user.refreshToken.at(-1) === 'A' ? 'B' : 'A';
    const altered = await refresh(t, user.refreshToken.slice(0, -1) + last);
    expect(altered.statusCode).toBe(401);
    expect((await refresh(t, 'rt_nonsense')).statusCode).toBe(401);
    // The real token still works: the failures above did not revoke anything.
    expect((await refresh(t, user.refreshToken)).statusCode).toBe(200);
  });

  it('refuses a refresh token used as a bearer credential', async () => {
    const user = await signUp(t);
    const response = await t.call({ method: 'GET', url: '/v1/me', credential: user.refreshToken });
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('credential_not_accepted');
  });

  it('stores only hashes of refresh tokens', async () => {
    const user = await signUp(t);
    const rows = await t.store.db.selectFrom('sessions').selectAll().modifyEnd(crossTenant('test: every stored session')).execute();
    const text = JSON.stringify(rows);
    expect(text).not.toContain(user.refreshToken);
    expect(text).not.toContain(user.refreshToken.split('.')[2]);
  });
});
