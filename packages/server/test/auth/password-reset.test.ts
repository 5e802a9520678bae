import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, me, signIn, signUp, uniqueEmail } from '../helpers/identity.js';

const NEW_PASSWORD = 'a brand new passphrase';

describe('password reset', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const complete = (token: string, newPassword = NEW_PASSWORD) => start(t, 'password-reset/complete', { token, newPassword });
  async function resetToken(email: string) {
    expect((await start(t, 'password-reset', { email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    return tokenFrom((await outbox(t, email))[0]!);
  }

  it('sets the new password and revokes every session of the user', async () => {
    const user = await signUp(t);
    const other = (await signIn(t, user.email, GOOD_PASSWORD)).json();
    const token = await resetToken(user.email);
    const res = await complete(token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ reset: true, sessionsRevoked: 2 });
    expect((await me(t, user.accessToken)).statusCode).toBe(401);
    expect((await me(t, other.session.accessToken)).statusCode).toBe(401);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(401);
    expect((await signIn(t, user.email, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await complete(token)).statusCode).toBe(401);
  });

  it('applies the password policy without spending the token', async () => {
    const user = await signUp(t);
    const token = await resetToken(user.email);
    const weak = await complete(token, 'password');
    expect(weak.statusCode).toBe(422);
    expect(weak.json().error.code).toBe('weak_password');
    expect((await complete(token)).statusCode).toBe(200);
  });

  it('voids a reset token once the password changed after it was issued', async () => {
    const user = await signUp(t);
    const token = await resetToken(user.email);
    const changed = await t.call({
      method: 'POST',
      url: '/v1/me/password',
      credential: user.accessToken,
      payload: { currentPassword: GOOD_PASSWORD, newPassword: 'another fine passphrase' },
    });
    expect(changed.statusCode).toBe(200);
    const res = await complete(token);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toContain('password changed');
  });

  it('expires after 10 minutes', async () => {
    const user = await signUp(t);
    const token = await resetToken(user.email);
    clock.advance(10 * 60_000 + 1);
    expect((await complete(token)).statusCode).toBe(401);
  });

  it('creates the account for an unknown address when sign-up is allowed', async () => {
    const address = uniqueEmail('resetter');
    const token = await resetToken(address);
    expect((await outbox(t, address))[0]!.kind).toBe('sign_up_link');
    expect((await complete(token)).json()).toEqual({ reset: true, sessionsRevoked: 0 });
    expect((await signIn(t, address, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('resets the account that appeared after a sign-up link was sent, instead of claiming success', async () => {
    const address = uniqueEmail('late');
    const token = await resetToken(address);
    const created = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: t.project.development.secretKey,
      payload: { email: address },
    });
    expect(created.statusCode).toBe(201);
    expect((await complete(token)).json()).toEqual({ reset: true, sessionsRevoked: 0 });
    expect((await signIn(t, address, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('is 403 method_disabled when password authentication is off', async () => {
    const other = await t.createProject('No passwords');
    await t.setSettings(other.development.id, { authMethods: { password: false } });
    const res = await start(t, 'password-reset', { email: uniqueEmail(), redirectUrl: REDIRECT }, other.development);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('method_disabled');
  });
});
