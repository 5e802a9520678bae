import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, refresh, signIn, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall, reverify, totpCode } from '../helpers/mfa.js';
import { REDIRECT } from '../helpers/flows.js';

const clock = testClock(1_860_000_000_000);
const MINUTE = 60_000;

describe('reverification skipped: a stale session making sensitive changes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    // Access tokens outlive the 10-minute window, so a token minted right after a verification is still valid when it lapses.
    await t.setSettings(t.project.development.id, { accessTokenTtlSeconds: 3600 });
  });
  afterAll(() => t.close());

  it('a session last verified over 10 minutes ago cannot disable TOTP or replace backup codes', async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken, clock.now);
    clock.advance(10 * MINUTE + 1);
    for (const [method, url] of [
      ['DELETE', '/v1/me/mfa/totp'],
      ['POST', '/v1/me/mfa/backup-codes'],
    ] as const) {
      const refused = await mfaCall(t, user.accessToken, method, url);
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('reverification_required');
    }
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).totp.enabled).toBe(true);
    // The authenticator still works afterwards: nothing was removed.
    expect((await reverify(t, user.accessToken, { code: totpCode(secret, clock.now()) })).statusCode).toBe(200);
  });

  it('the rule reads the session, not the token: a token that says fva [0, 0] does not help once the session is stale', async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken, clock.now);
    clock.advance(MINUTE);
    const fresh = json(await reverify(t, user.accessToken, { code: totpCode(secret, clock.now()) })).session.accessToken;
    expect(decodeJwt(fresh).payload.fva).toEqual([1, 0]);
    clock.advance(10 * MINUTE + 1);
    const refused = await mfaCall(t, fresh, 'DELETE', '/v1/me/mfa/totp');
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('reverification_required');
  });

  it('a stale session cannot delete the account; after reverification it can', async () => {
    const user = await signUp(t);
    clock.advance(10 * MINUTE + 1);
    const refused = await mfaCall(t, user.accessToken, 'DELETE', '/v1/me');
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('reverification_required');
    expect((await mfaCall(t, user.accessToken, 'GET', '/v1/me')).statusCode).toBe(200);
    expect((await reverify(t, user.accessToken, { password: GOOD_PASSWORD })).statusCode).toBe(200);
    const deleted = await mfaCall(t, user.accessToken, 'DELETE', '/v1/me');
    expect(deleted.statusCode).toBe(200);
    expect(json(deleted)).toEqual({ id: user.userId, deleted: true });
  });

  it('a stale session cannot create an API key; after reverification it can', async () => {
    const user = await signUp(t);
    clock.advance(10 * MINUTE + 1);
    const create = () => mfaCall(t, user.accessToken, 'POST', '/v1/me/api-keys', { name: 'ci' });
    const refused = await create();
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('reverification_required');
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/api-keys')).data).toEqual([]);
    expect((await reverify(t, user.accessToken, { password: GOOD_PASSWORD })).statusCode).toBe(200);
    expect((await create()).statusCode).toBe(201);
  });

  it('a hosted handoff does not make a stale session fresh: the exchanged session carries its verifications', async () => {
    const user = await signUp(t);
    clock.advance(10 * MINUTE + 1);
    const minted = await mfaCall(t, user.accessToken, 'POST', '/v1/me/handoff', { redirectUrl: REDIRECT });
    expect(minted.statusCode).toBe(200);
    const token = new URLSearchParams(new URL(json(minted).redirectUrl).hash.slice(1)).get('__gh_handoff')!;
    const exchanged = await t.call({ method: 'POST', url: '/v1/auth/handoff', credential: t.project.development.publishableKey, payload: { token } });
    expect(exchanged.statusCode).toBe(200);
    const session = json(exchanged).session;
    expect(decodeJwt(session.accessToken).payload).toMatchObject({ amr: ['pwd'], fva: [10, -1] });
    const refused = await mfaCall(t, session.accessToken, 'POST', '/v1/me/api-keys', { name: 'kept' });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('reverification_required');
  });

  it('enrolling an authenticator from a stale session does not make the session fresh', async () => {
    const user = await signUp(t);
    clock.advance(10 * MINUTE + 1);
    await enableTotp(t, user.accessToken, clock.now);
    const refused = await mfaCall(t, user.accessToken, 'POST', '/v1/me/api-keys', { name: 'kept' });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('reverification_required');
    expect((await mfaCall(t, user.accessToken, 'DELETE', '/v1/me')).statusCode).toBe(403);
  });

  it('a refresh is not a verification', async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken, clock.now);
    clock.advance(10 * MINUTE + 1);
    const refreshed = json(await refresh(t, user.refreshToken)).session.accessToken;
    expect((await mfaCall(t, refreshed, 'DELETE', '/v1/me/mfa/totp')).statusCode).toBe(403);
  });

  it("another session's verification does not count for this one", async () => {
    const user = await signUp(t);
    const other = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    await enableTotp(t, user.accessToken, clock.now);
    clock.advance(10 * MINUTE + 1);
    expect((await reverify(t, other.accessToken, { password: GOOD_PASSWORD })).statusCode).toBe(200);
    expect((await mfaCall(t, user.accessToken, 'DELETE', '/v1/me/mfa/totp')).statusCode).toBe(403);
    expect((await mfaCall(t, other.accessToken, 'DELETE', '/v1/me/mfa/totp')).statusCode).toBe(204);
  });
});
