import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, me, refresh, signIn, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall, reverify, totpCode } from '../helpers/mfa.js';

const clock = testClock(1_810_000_000_000);
const MINUTE = 60_000;

describe('POST /v1/me/reverify, and amr and fva in the access token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  it('a password sign-in carries amr ["pwd"] and fva [0, -1]; a refresh keeps amr and recomputes fva', async () => {
    const user = await signUp(t);
    const signedIn = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    expect(decodeJwt(signedIn.accessToken).payload).toMatchObject({ amr: ['pwd'], fva: [0, -1] });
    clock.advance(3 * MINUTE);
    const refreshed = json(await refresh(t, signedIn.refreshToken)).session;
    expect(decodeJwt(refreshed.accessToken).payload).toMatchObject({ amr: ['pwd'], fva: [3, -1] });
  });

  it('with a password: the factor is verified now and a new access token says so', async () => {
    const user = await signUp(t);
    clock.advance(20 * MINUTE);
    const stale = json(await refresh(t, user.refreshToken)).session;
    expect(decodeJwt(stale.accessToken).payload.fva).toEqual([20, -1]);
    const answer = await reverify(t, stale.accessToken, { password: GOOD_PASSWORD });
    expect(answer.statusCode).toBe(200);
    const { session } = json(answer);
    expect(Object.keys(session).sort()).toEqual(['accessToken', 'expiresIn', 'tokenType']);
    expect(decodeJwt(session.accessToken).payload).toMatchObject({ sub: user.userId, amr: ['pwd'], fva: [0, -1] });
    expect((await me(t, session.accessToken)).statusCode).toBe(200);
    // The refresh token is unchanged and keeps the new times.
    const later = json(await refresh(t, stale.refreshToken)).session;
    expect(decodeJwt(later.accessToken).payload.fva).toEqual([0, -1]);
  });

  it('with a TOTP code or a backup code: the second factor joins amr and fva[1] becomes 0', async () => {
    const user = await signUp(t);
    // A second, password-only session from before TOTP (a sign-in after it would ask for the code).
    const signedIn = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    const { secret, backupCodes } = await enableTotp(t, user.accessToken, clock.now);
    clock.advance(2 * MINUTE);
    const byCode = await reverify(t, user.accessToken, { code: totpCode(secret, clock.now()) });
    expect(byCode.statusCode).toBe(200);
    expect(decodeJwt(json(byCode).session.accessToken).payload).toMatchObject({ amr: ['pwd', 'totp'], fva: [2, 0] });

    // Compared without case, "-" or spaces.
    const code = backupCodes[0]!;
    const typed = `${code.slice(0, 5).toUpperCase()}-${code.slice(5)}`;
    const byBackup = await reverify(t, signedIn.accessToken, { backupCode: typed });
    expect(byBackup.statusCode).toBe(200);
    expect(decodeJwt(json(byBackup).session.accessToken).payload).toMatchObject({ amr: ['pwd', 'backup_code'], fva: [2, 0] });
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).backupCodes.remaining).toBe(9);
  });

  it('refuses a wrong factor with 401 and changes nothing', async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken, clock.now);
    for (const body of [{ password: 'not the password at all' }, { code: '12345' }, { backupCode: 'aaaaaaaaaa' }]) {
      const answer = await reverify(t, user.accessToken, body);
      expect(answer.statusCode).toBe(401);
      expect(json(answer).error.code).toBe('invalid_credentials');
    }
  });

  it('takes exactly one factor (400 otherwise)', async () => {
    const user = await signUp(t);
    expect((await reverify(t, user.accessToken, {})).statusCode).toBe(400);
    expect((await reverify(t, user.accessToken, { password: GOOD_PASSWORD, code: '123456' })).statusCode).toBe(400);
  });

  it('a session without TOTP cannot reverify with a code', async () => {
    const user = await signUp(t);
    expect((await reverify(t, user.accessToken, { code: '123456' })).statusCode).toBe(401);
  });
});
