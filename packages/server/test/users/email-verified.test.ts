import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, me, signIn, signUp, uniqueEmail } from '../helpers/identity.js';

describe('emailVerified', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload ? { payload } : {}) });
  const verifiedOf = async (accessToken: string) => (await me(t, accessToken)).json().user.emailVerified;

  it('is false after a password sign-up: typing an address proves nothing', async () => {
    const user = await signUp(t);
    expect(await verifiedOf(user.accessToken)).toBe(false);
  });

  it('is true for an account a magic link creates', async () => {
    const address = uniqueEmail('link');
    await start(t, 'magic-link', { email: address, redirectUrl: REDIRECT });
    const res = await start(t, 'magic-link/verify', { token: tokenFrom((await outbox(t, address))[0]!) });
    expect(res.statusCode).toBe(200);
    expect(await verifiedOf(res.json().session.accessToken)).toBe(true);
  });

  it('turns true when a password user proves the address with an email code', async () => {
    const user = await signUp(t);
    await start(t, 'email-code', { email: user.email });
    const res = await start(t, 'email-code/verify', { email: user.email, code: codeFrom((await outbox(t, user.email))[0]!) });
    expect(res.statusCode).toBe(200);
    expect(await verifiedOf(res.json().session.accessToken)).toBe(true);
  });

  it('the first proof of an address removes a password set before it, and signs out the sessions made with it (pre-registration takeover)', async () => {
    // Someone registers another person's address with a password of their own, and keeps the session.
    const squatter = await signUp(t, { email: uniqueEmail('victim') });
    // The owner signs in with an emailed code: the account becomes theirs alone.
    await start(t, 'email-code', { email: squatter.email });
    const owner = await start(t, 'email-code/verify', { email: squatter.email, code: codeFrom((await outbox(t, squatter.email))[0]!) });
    expect(owner.statusCode).toBe(200);
    expect((await me(t, squatter.accessToken)).statusCode).toBe(401);
    expect((await signIn(t, squatter.email, GOOD_PASSWORD)).statusCode).toBe(401);
    const profile = (await me(t, owner.json().session.accessToken)).json().user;
    expect(profile).toMatchObject({ emailVerified: true, passwordEnabled: false });
  });

  it('turns true when a password reset link is used', async () => {
    const user = await signUp(t);
    await start(t, 'password-reset', { email: user.email, redirectUrl: REDIRECT });
    const token = tokenFrom((await outbox(t, user.email))[0]!);
    const res = await start(t, 'password-reset/complete', { token, newPassword: `${GOOD_PASSWORD} again` });
    expect(res.statusCode).toBe(200);
    expect((await admin('GET', `/v1/users/${user.userId}`)).json().emailVerified).toBe(true);
  });

  it('is not set by a link sent to the address the user has since left', async () => {
    const user = await signUp(t);
    await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT });
    const token = tokenFrom((await outbox(t, user.email))[0]!);
    const moved = uniqueEmail('moved');
    expect((await admin('PATCH', `/v1/users/${user.userId}`, { email: moved })).statusCode).toBe(200);
    expect((await start(t, 'magic-link/verify', { token })).statusCode).toBe(200);
    expect((await admin('GET', `/v1/users/${user.userId}`)).json()).toMatchObject({ email: moved, emailVerified: false });
  });

  it('is what the operator says on POST /v1/users (false by default), and a new address resets it', async () => {
    const plain = await admin('POST', '/v1/users', { email: uniqueEmail('plain') });
    expect(plain.json().emailVerified).toBe(false);
    const vouched = await admin('POST', '/v1/users', { email: uniqueEmail('vouched'), emailVerified: true });
    expect(vouched.statusCode).toBe(201);
    expect(vouched.json().emailVerified).toBe(true);

    const changed = await admin('PATCH', `/v1/users/${vouched.json().id}`, { email: uniqueEmail('changed') });
    expect(changed.json().emailVerified).toBe(false);
    const again = await admin('PATCH', `/v1/users/${vouched.json().id}`, { email: uniqueEmail('again'), emailVerified: true });
    expect(again.json().emailVerified).toBe(true);
  });

  it('cannot be set by the user on PATCH /v1/me', async () => {
    const user = await signUp(t);
    const res = await t.call({ method: 'PATCH', url: '/v1/me', credential: user.accessToken, payload: { emailVerified: true } });
    expect(res.statusCode).toBe(400);
    expect(await verifiedOf(user.accessToken)).toBe(false);
  });

  it('refuses a non-boolean with a 400 naming the field', async () => {
    const res = await admin('POST', '/v1/users', { email: uniqueEmail('bad'), emailVerified: 'yes' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('emailVerified');
  });
});
