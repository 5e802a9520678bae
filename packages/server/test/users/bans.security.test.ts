import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, json, me, refresh, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { createOrg, plainUser } from '../helpers/organizations.js';

describe('bans', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, rateLimit: false });
  });
  afterAll(() => t.close());

  const sk = (method: 'GET' | 'POST', url: string, payload?: object) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload ? { payload } : {}) });
  const ban = (userId: string) => sk('POST', `/v1/users/${userId}/ban`);
  const unban = (userId: string) => sk('POST', `/v1/users/${userId}/unban`);

  it('a ban revokes every session at once: access tokens and refresh tokens stop working', async () => {
    const user = await signUp(t);
    const second = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    const banned = await ban(user.userId);
    expect(banned.statusCode, banned.body).toBe(200);
    expect(json(banned)).toMatchObject({ id: user.userId, banned: true });
    for (const accessToken of [user.accessToken, second.accessToken]) {
      const res = await me(t, accessToken);
      expect(res.statusCode).toBe(401);
      expect(json(res).error.code).toBe('session_revoked');
    }
    expect((await refresh(t, user.refreshToken)).statusCode).toBe(401);
  });

  it('every sign-in method answers 403 user_banned, once the person has proven who they are', async () => {
    const user = await signUp(t);
    await ban(user.userId);
    const lastSignInAt = () =>
      t.call({ method: 'GET', url: `/v1/users/${user.userId}`, credential: t.project.development.secretKey }).then((r) => json(r).lastSignInAt);
    const stampedAtSignUp = await lastSignInAt();
    expect(stampedAtSignUp).toEqual(expect.any(Number));

    const password = await signIn(t, user.email, GOOD_PASSWORD);
    expect(password.statusCode).toBe(403);
    expect(json(password).error).toMatchObject({ code: 'user_banned', message: expect.stringContaining('banned') });
    // A wrong password learns nothing: the same 401 as for anyone.
    const wrong = await signIn(t, user.email, 'not the password at all');
    expect(wrong.statusCode).toBe(401);
    expect(json(wrong).error.code).toBe('invalid_credentials');

    await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT });
    const link = await start(t, 'magic-link/verify', { token: tokenFrom((await outbox(t, user.email))[0]!) });
    expect(link.statusCode).toBe(403);
    expect(json(link).error.code).toBe('user_banned');

    await start(t, 'email-code', { email: user.email });
    const code = codeFrom((await outbox(t, user.email)).find((m) => m.kind === 'email_code')!);
    const byCode = await start(t, 'email-code/verify', { email: user.email, code });
    expect(byCode.statusCode).toBe(403);
    expect(json(byCode).error.code).toBe('user_banned');

    // No session was left behind by the refused attempts.
    const sessions = await t.store.db
      .selectFrom('sessions')
      .select(['id', 'revoked_at'])
      .where('environment_id', '=', t.project.development.id as never)
      .where('user_id', '=', user.userId)
      .execute();
    expect(sessions.every((s) => s.revoked_at !== null)).toBe(true);
    // Not even a revoked one: the attempts inserted nothing (no session, no session.created event).
    expect(sessions).toHaveLength(1);
    // And a refused attempt is not a sign-in.
    expect(await lastSignInAt()).toBe(stampedAtSignUp);
  });

  it('a banned user cannot join an organization by an invitation link', async () => {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id);
    const user = await signUp(t);
    await ban(user.userId);
    await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: user.email, role: 'member' });
    const accepted = await start(t, 'invitations/accept', { token: tokenFrom((await outbox(t, user.email))[0]!) });
    expect(accepted.statusCode).toBe(403);
    expect(json(accepted).error.code).toBe('user_banned');
    const members = json(await sk('GET', `/v1/organizations/${org.id}/members`)).data;
    expect(members.map((m: { userId: string }) => m.userId)).toEqual([owner.id]);
  });

  it("a banned user's refused magic-link sign-in changes nothing: after an unban the old password still works", async () => {
    // An unverified password account: the first proof of the address would remove the password.
    const user = await signUp(t);
    await ban(user.userId);
    await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT });
    const link = await start(t, 'magic-link/verify', { token: tokenFrom((await outbox(t, user.email))[0]!) });
    expect(link.statusCode).toBe(403);
    expect(json(link).error.code).toBe('user_banned');
    expect(json(await sk('GET', `/v1/users/${user.userId}`))).toMatchObject({ emailVerified: false, passwordEnabled: true });
    await unban(user.userId);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(200);
  });

  it("a banned user's refused email-code sign-in changes nothing either", async () => {
    const user = await signUp(t);
    await ban(user.userId);
    await start(t, 'email-code', { email: user.email });
    const code = codeFrom((await outbox(t, user.email)).find((m) => m.kind === 'email_code')!);
    expect(json(await start(t, 'email-code/verify', { email: user.email, code })).error.code).toBe('user_banned');
    expect(json(await sk('GET', `/v1/users/${user.userId}`))).toMatchObject({ emailVerified: false, passwordEnabled: true });
    await unban(user.userId);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(200);
  });

  it("a banned user's password reset is refused before it changes the password", async () => {
    const user = await signUp(t);
    await ban(user.userId);
    await start(t, 'password-reset', { email: user.email, redirectUrl: REDIRECT });
    const token = tokenFrom((await outbox(t, user.email)).find((m) => m.kind === 'password_reset')!);
    const reset = await start(t, 'password-reset/complete', { token, newPassword: `${GOOD_PASSWORD} new` });
    expect(reset.statusCode).toBe(403);
    expect(json(reset).error.code).toBe('user_banned');
    expect(json(await sk('GET', `/v1/users/${user.userId}`))).toMatchObject({ emailVerified: false, passwordEnabled: true });
    await unban(user.userId);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(200);
  });

  it('unban lets the user sign in again; their old sessions stay revoked', async () => {
    const user = await signUp(t);
    await ban(user.userId);
    const lifted = await unban(user.userId);
    expect(json(lifted).banned).toBe(false);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(200);
    expect((await me(t, user.accessToken)).statusCode).toBe(401);
  });

  it('sign-ins racing a ban leave no live session behind', async () => {
    for (let round = 0; round < 3; round++) {
      const user = await signUp(t, { email: uniqueEmail('racer') });
      await unban(user.userId);
      const attempts = Array.from({ length: 4 }, () => signIn(t, user.email, GOOD_PASSWORD));
      const [banned] = await Promise.all([ban(user.userId), ...attempts]);
      expect(banned.statusCode).toBe(200);
      const live = await t.store.db
        .selectFrom('sessions')
        .select('id')
        .where('environment_id', '=', t.project.development.id as never)
        .where('user_id', '=', user.userId)
        .where('revoked_at', 'is', null)
        .execute();
      expect(live).toEqual([]);
    }
  });

  it('answers 404 for an unknown user, and a ban shows in the user object', async () => {
    expect((await ban('user_nope')).statusCode).toBe(404);
    const plain = await plainUser(t);
    expect(json(await sk('GET', `/v1/users/${plain.id}`)).banned).toBe(false);
    await ban(plain.id);
    expect(json(await sk('GET', `/v1/users/${plain.id}`)).banned).toBe(true);
  });
});
