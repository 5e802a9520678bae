import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json, refresh, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall, reverify, totpCode } from '../helpers/mfa.js';

const clock = testClock(1_850_000_000_010);
const MINUTE = 60_000;

/** A 6-digit code that is not right for `secret` now (nor one step either side). */
function wrongCode(secret: string): string {
  const right = new Set([-1, 0, 1].map((offset) => totpCode(secret, clock.now(), offset)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!right.has(code)) return code;
  }
}

describe('brute force of second-factor codes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, throttle: { clock: clock.now } });
  });
  afterAll(() => t.close());

  it('past 10 wrong codes in 15 minutes every try is refused with 429 before it is compared, even the right code', async () => {
    const user = await signUp(t);
    const { secret, backupCodes } = await enableTotp(t, user.accessToken, clock.now);
    clock.advance(MINUTE);
    for (let i = 0; i < 10; i++) {
      const wrong = await reverify(t, user.accessToken, i % 2 === 0 ? { code: wrongCode(secret) } : { backupCode: 'zzzzzzzzzz' });
      expect(wrong.statusCode).toBe(401);
    }
    const right = await reverify(t, user.accessToken, { code: totpCode(secret, clock.now()) });
    expect(right.statusCode).toBe(429);
    expect(json(right).error.code).toBe('rate_limited');
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    // Refused unexamined: the backup code is not spent by the refused try.
    expect((await reverify(t, user.accessToken, { backupCode: backupCodes[0] })).statusCode).toBe(429);

    clock.advance(15 * MINUTE);
    const refreshed = json(await refresh(t, user.refreshToken)).session.accessToken;
    const afterLock = await reverify(t, refreshed, { backupCode: backupCodes[0] });
    expect(afterLock.statusCode).toBe(200);
    const token = json(afterLock).session.accessToken;
    expect(json(await mfaCall(t, token, 'GET', '/v1/me/mfa')).backupCodes.remaining).toBe(9);
  });

  it('wrong codes at enrolment count too', async () => {
    const user = await signUp(t);
    const { secret } = json(await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp'));
    for (let i = 0; i < 10; i++) {
      expect((await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: wrongCode(secret) })).statusCode).toBe(401);
    }
    const right = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: totpCode(secret, clock.now()) });
    expect(right.statusCode).toBe(429);
  });

  it('a right code is not counted: eleven right codes in a row are all accepted', async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken, clock.now);
    let token = user.accessToken;
    for (let i = 0; i < 11; i++) {
      clock.advance(30_000);
      const answer = await reverify(t, token, { code: totpCode(secret, clock.now()) });
      expect(answer.statusCode).toBe(200);
      token = json(answer).session.accessToken;
    }
  });
});
