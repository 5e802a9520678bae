import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, me, refresh, signIn, signUp } from '../helpers/identity.js';

const NEW_PASSWORD = 'a brand new passphrase for ada';

describe('POST /v1/me/password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const change = (token: string, payload: Record<string, unknown>) =>
    t.call({ method: 'POST', url: '/v1/me/password', credential: token, payload });

  it('changes the password, revokes every other session and keeps this one', async () => {
    const first = await signUp(t);
    const second = json(await signIn(t, first.email, GOOD_PASSWORD)).session;
    const third = json(await signIn(t, first.email, GOOD_PASSWORD)).session;

    const response = await change(first.accessToken, { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({ changed: true, otherSessionsRevoked: 2 });

    expect((await me(t, first.accessToken)).statusCode).toBe(200);
    expect((await refresh(t, first.refreshToken)).statusCode).toBe(200);
    for (const other of [second, third]) {
      expect(json(await me(t, other.accessToken)).error.code).toBe('session_revoked');
      expect(json(await refresh(t, other.refreshToken)).error.code).toBe('session_revoked');
    }
    expect((await signIn(t, first.email, GOOD_PASSWORD)).statusCode).toBe(401);
    expect((await signIn(t, first.email, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('refuses a wrong current password with 401 and changes nothing', async () => {
    const user = await signUp(t);
    const response = await change(user.accessToken, { currentPassword: 'not my password at all', newPassword: NEW_PASSWORD });
    expect(response.statusCode).toBe(401);
    expect(json(response).error.code).toBe('invalid_credentials');
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(200);
  });

  it('applies the password policy to the new password', async () => {
    const user = await signUp(t);
    const weak = await change(user.accessToken, { currentPassword: GOOD_PASSWORD, newPassword: 'sunshine' });
    expect(weak.statusCode).toBe(422);
    expect(json(weak).error).toMatchObject({ code: 'weak_password', details: { fields: ['newPassword'] } });
    const missing = await change(user.accessToken, { currentPassword: GOOD_PASSWORD });
    expect(missing.statusCode).toBe(400);
  });
});
