import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { decodeJwt, GOOD_PASSWORD, json, refresh, signIn, uniqueEmail } from '../helpers/identity.js';
import { secondFactor, totpCode } from '../helpers/mfa.js';
import { testDb } from '../helpers/store.js';

const START_AGAIN = /start the sign-in again/i;

/**
 * A second-factor attempt stands for a first factor proven earlier. Whatever revokes the user's
 * sessions because that first factor is no longer theirs (the owner proving the address, a password
 * reset, the support reset) voids the pending attempts too, so the attempt cannot finish later.
 */
describe(`a pending second-factor attempt outliving the revocation of its first factor (${testDb()})`, () => {
  let t: TestApp;
  const clock = testClock();
  const dev = () => t.project.development;
  const settings = (payload: Record<string, unknown>) =>
    t.call({ method: 'PATCH', url: `/v1/platform/environments/${dev().id}`, credential: t.platformKey, payload });

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    expect((await settings({ mfa: 'required', accessTokenTtlSeconds: 3600 })).statusCode).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('a squatter’s setup attempt is void once the owner proves the address (pre-registration takeover)', async () => {
    const email = uniqueEmail('squatted');
    const squat = await t.call({ method: 'POST', url: '/v1/auth/signup', credential: dev().publishableKey, payload: { email, password: GOOD_PASSWORD } });
    expect(json(squat).status).toBe('needs_second_factor_setup');
    const attemptId = json(squat).attemptId as string;

    // The owner proves the address with a magic link: the squatter's password goes, and so does the attempt.
    expect((await start(t, 'magic-link', { email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const mails = await outbox(t, email);
    expect((await start(t, 'magic-link/verify', { token: tokenFrom(mails[mails.length - 1]!) })).statusCode).toBe(202);

    const setup = await start(t, 'signin/second-factor/totp-setup', { attemptId });
    expect(setup.statusCode).toBe(401);
    expect(json(setup).error.message).toMatch(START_AGAIN);
  });

  it('an attempt made with a stolen password is void after the owner resets the password', async () => {
    const email = uniqueEmail('reset');
    expect(
      (await t.call({ method: 'POST', url: '/v1/users', credential: dev().secretKey, payload: { email, password: GOOD_PASSWORD, emailVerified: true } }))
        .statusCode,
    ).toBe(201);
    const attemptId = json(await signIn(t, email, GOOD_PASSWORD)).attemptId as string;
    const setup = await start(t, 'signin/second-factor/totp-setup', { attemptId });
    expect(setup.statusCode).toBe(200);

    expect((await start(t, 'password-reset', { email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const mails = await outbox(t, email);
    const reset = await start(t, 'password-reset/complete', { token: tokenFrom(mails[mails.length - 1]!), newPassword: 'a brand new long passphrase 42' });
    expect(reset.statusCode).toBe(200);

    const done = await secondFactor(t, { attemptId, factor: 'totp', code: totpCode(json(setup).secret as string) });
    expect(done.statusCode).toBe(401);
    expect(json(done).error.message).toMatch(START_AGAIN);
  });

  it('an impersonated session’s access token (an hour-long TTL) expires with the session’s hour, not after it', async () => {
    const email = uniqueEmail('acted');
    const user = json(await t.call({ method: 'POST', url: '/v1/users', credential: dev().secretKey, payload: { email, password: GOOD_PASSWORD } }));
    const minted = await t.call({ method: 'POST', url: '/v1/actor-tokens', credential: dev().secretKey, payload: { userId: user.id, actor: { sub: 'support:ada' } } });
    expect(minted.statusCode).toBe(201);
    const redeemed = await start(t, 'actor-token', { token: json(minted).token });
    expect(redeemed.statusCode).toBe(200);
    const { iat, exp } = decodeJwt(json(redeemed).session.accessToken).payload as { iat: number; exp: number };
    expect(exp - iat).toBeLessThanOrEqual(3600);
    // 59 minutes on, a refresh may not hand out a token that outlives the session's hour.
    clock.advance(59 * 60_000);
    const refreshed = await refresh(t, json(redeemed).session.refreshToken);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const later = decodeJwt(json(refreshed).session.accessToken).payload as { exp: number };
    expect(later.exp).toBeLessThanOrEqual(iat + 3600);
    expect(json(refreshed).session.expiresIn).toBeLessThanOrEqual(60);
  });
});
