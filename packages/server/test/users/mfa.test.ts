import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Encode } from '../../src/mfa/totp.js';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json, me, refresh, signUp, uniqueEmail } from '../helpers/identity.js';
import { enableTotp, mfaCall, secondFactor, totpCode } from '../helpers/mfa.js';

const clock = testClock(1_820_000_000_000);
/** RFC 6238's SHA-1 seed, as a base32 secret an exporting system would hand over. */
const IMPORTED_SECRET = base32Encode(Buffer.from('12345678901234567890'));

describe('second factors on the secret-key surface', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;
  const getUser = async (id: string) => json(await t.call({ method: 'GET', url: `/v1/users/${id}`, credential: sk() }));

  it('shows twoFactorEnabled in the user views', async () => {
    const user = await signUp(t);
    expect((await getUser(user.userId)).twoFactorEnabled).toBe(false);
    await enableTotp(t, user.accessToken, clock.now);
    expect((await getUser(user.userId)).twoFactorEnabled).toBe(true);
    const listed = json(await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(user.email)}`, credential: sk() }));
    expect(listed.data[0].twoFactorEnabled).toBe(true);
  });

  it('DELETE /v1/users/{id}/mfa removes every second factor and revokes the sessions', async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken, clock.now);
    const reset = await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}/mfa`, credential: sk() });
    expect(reset.statusCode).toBe(200);
    expect(json(reset)).toMatchObject({ id: user.userId, twoFactorEnabled: false });
    expect(json(await me(t, user.accessToken)).error.code).toBe('session_revoked');
    expect(json(await refresh(t, user.refreshToken)).error.code).toBe('session_revoked');
    const counts = await t.store.db
      .selectFrom('user_backup_codes')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('environment_id', '=', t.project.development.id)
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    expect(Number(counts.n)).toBe(0);
    expect((await t.call({ method: 'DELETE', url: '/v1/users/user_nope/mfa', credential: sk() })).statusCode).toBe(404);
  });

  it('POST /v1/users takes a totpSecret: TOTP is on with that secret, and no backup codes are made', async () => {
    const created = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: sk(),
      payload: { email: uniqueEmail('imported'), password: 'correct horse battery staple', totpSecret: IMPORTED_SECRET.toLowerCase() },
    });
    expect(created.statusCode, created.body).toBe(201);
    const user = json(created);
    expect(user.twoFactorEnabled).toBe(true);
    const first = await t.call({
      method: 'POST',
      url: '/v1/auth/signin',
      credential: t.project.development.publishableKey,
      payload: { email: user.email, password: 'correct horse battery staple' },
    });
    // TOTP only: no backup codes were made for the imported secret.
    expect(json(first)).toMatchObject({ status: 'needs_second_factor', factors: ['totp'] });
    // The imported secret is the one the user's app holds.
    const done = await secondFactor(t, { attemptId: json(first).attemptId, factor: 'totp', code: totpCode(IMPORTED_SECRET, clock.now()) });
    expect(done.statusCode, done.body).toBe(200);
    expect(json(await mfaCall(t, json(done).session.accessToken, 'GET', '/v1/me/mfa'))).toMatchObject({
      totp: { enabled: true },
      backupCodes: { remaining: 0 },
    });
  });

  it('refuses a totpSecret that is not a base32 secret of at least 80 bits', async () => {
    for (const totpSecret of ['not base32 at all!', 'ABCDEFGH', 'ABCDEFGH        ']) {
      const answer = await t.call({ method: 'POST', url: '/v1/users', credential: sk(), payload: { email: uniqueEmail(), totpSecret } });
      expect(answer.statusCode).toBe(400);
    }
  });

  it('POST /v1/users/import takes totpSecret per row', async () => {
    const rows = [
      { email: uniqueEmail('row'), externalId: `ext_${Date.now()}_1`, totpSecret: IMPORTED_SECRET },
      { email: uniqueEmail('row'), externalId: `ext_${Date.now()}_2` },
      { email: uniqueEmail('row'), totpSecret: 'short' },
    ];
    const answer = await t.call({ method: 'POST', url: '/v1/users/import', credential: sk(), payload: { users: rows } });
    expect(answer.statusCode).toBe(200);
    const [withTotp, without, bad] = json(answer).data;
    expect(withTotp.user.twoFactorEnabled).toBe(true);
    expect(without.user.twoFactorEnabled).toBe(false);
    expect(bad.error.code).toBe('invalid_request');
    const stored = await t.store.db
      .selectFrom('user_totp')
      .select(['secret', 'enabled_at'])
      .where('environment_id', '=', t.project.development.id)
      .where('user_id', '=', withTotp.user.id)
      .executeTakeFirstOrThrow();
    expect(stored.secret).not.toContain(IMPORTED_SECRET);
    expect(stored.enabled_at).not.toBeNull();
  });
});
