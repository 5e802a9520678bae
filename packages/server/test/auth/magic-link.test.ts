import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { me, signUp, uniqueEmail } from '../helpers/identity.js';

describe('magic links', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const verify = (token: string) => start(t, 'magic-link/verify', { token });

  it('emails a one-time link to a known user, which signs them in once', async () => {
    const user = await signUp(t);
    const res = await start(t, 'magic-link', { email: user.email, redirectUrl: `${REDIRECT}?next=%2Fhome` });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ status: 'sent' });

    const [email] = await outbox(t, user.email);
    expect(email).toMatchObject({ to: user.email, kind: 'magic_link', subject: 'Sign in to Test project' });
    expect(email!.text).toContain('10 minutes');
    const link = new URL(/(https:\/\/\S+)/.exec(email!.text)![1]!);
    expect(link.origin + link.pathname).toBe(REDIRECT);
    expect(link.searchParams.get('next')).toBe('/home');

    const signedIn = await verify(tokenFrom(email!));
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json().user).toEqual({ id: user.userId, email: user.email });
    expect((await me(t, signedIn.json().session.accessToken)).statusCode).toBe(200);

    const again = await verify(tokenFrom(email!));
    expect(again.statusCode).toBe(401);
    expect(again.json().error.code).toBe('invalid_credentials');
  });

  it('sends a sign-up link to an unknown address, and verifying it creates the account', async () => {
    const address = uniqueEmail('newcomer');
    expect((await start(t, 'magic-link', { email: address, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const [email] = await outbox(t, address);
    expect(email!.kind).toBe('sign_up_link');
    const res = await verify(tokenFrom(email!));
    expect(res.statusCode).toBe(200);
    expect(res.json().user.email).toBe(address);
    const profile = await me(t, res.json().session.accessToken);
    expect(profile.json().user).toMatchObject({ id: res.json().user.id, email: address });
  });

  it('expires after 10 minutes', async () => {
    const user = await signUp(t);
    await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT });
    const [email] = await outbox(t, user.email);
    clock.advance(10 * 60_000 + 1);
    const res = await verify(tokenFrom(email!));
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toContain('expired');
  });

  it('refuses a link from another environment', async () => {
    const user = await signUp(t);
    await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT });
    const [email] = await outbox(t, user.email);
    const other = await t.createProject('Other');
    const res = await t.call({
      method: 'POST',
      url: '/v1/auth/magic-link/verify',
      credential: other.development.publishableKey,
      payload: { token: tokenFrom(email!) },
    });
    expect(res.statusCode).toBe(401);
  });

  it('is 403 method_disabled when turned off, for start and verify', async () => {
    const other = await t.createProject('No links');
    await t.setSettings(other.development.id, { authMethods: { magicLink: false } });
    const res = await start(t, 'magic-link', { email: uniqueEmail(), redirectUrl: REDIRECT }, other.development);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('method_disabled');
    const verifyRes = await start(t, 'magic-link/verify', { token: 'x' }, other.development);
    expect(verifyRes.json().error.code).toBe('method_disabled');
  });

  it('refuses redirect URLs the origin lock would refuse, sending nothing', async () => {
    const address = uniqueEmail('redirect');
    for (const redirectUrl of [
      '//evil.test',
      'https://example.test@evil.test',
      'https://example.test.evil.test',
      'https:/\\evil.test',
      'javascript:alert(1)',
      'https%3A%2F%2Fevil.test',
    ]) {
      const res = await start(t, 'magic-link', { email: address, redirectUrl });
      expect(res.statusCode, redirectUrl).toBe(400);
      expect(res.json().error.details.fields).toEqual(['redirectUrl']);
    }
    expect(await outbox(t, address)).toHaveLength(0);
  });
});
