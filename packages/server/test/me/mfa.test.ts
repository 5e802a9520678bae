import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json, me, refresh, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall, reverify, totpCode } from '../helpers/mfa.js';

const clock = testClock(1_800_000_000_000);

/** The webhook events recorded for a user, oldest first. */
async function userUpdates(t: TestApp, environmentId: string, userId: string): Promise<Array<Record<string, any>>> {
  const rows = await t.store.db
    .selectFrom('webhook_events')
    .select(['type', 'body'])
    .where('environment_id', '=', environmentId as never)
    .where('type', '=', 'user.updated')
    .orderBy('id')
    .execute();
  return rows.map((r) => JSON.parse(r.body).data).filter((d) => d.id === userId);
}

describe('/v1/me/mfa', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  it('shows no second factor for a new user', async () => {
    const user = await signUp(t);
    const status = await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa');
    expect(status.statusCode).toBe(200);
    expect(json(status)).toEqual({ totp: { enabled: false }, backupCodes: { remaining: 0 }, passkeys: 0 });
    expect(json(await me(t, user.accessToken)).user.twoFactorEnabled).toBe(false);
  });

  it('enables TOTP: a pending secret with its otpauth URL, then a code, then 10 backup codes', async () => {
    const user = await signUp(t);
    const setup = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp');
    expect(setup.statusCode).toBe(200);
    const { secret, otpauthUrl } = json(setup);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUrl).toBe(`otpauth://totp/Test%20project:${encodeURIComponent(user.email)}?secret=${secret}&issuer=Test%20project`);
    // Still pending: nothing is enabled until a code confirms it.
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).totp).toEqual({ enabled: false });

    const wrong = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', {
      code: '000000' === totpCode(secret, clock.now()) ? '111111' : '000000',
    });
    expect(wrong.statusCode).toBe(401);
    expect(json(wrong).error.code).toBe('invalid_credentials');

    const verified = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: totpCode(secret, clock.now()) });
    expect(verified.statusCode).toBe(200);
    const body = json(verified);
    expect(body.totp).toEqual({ enabled: true });
    expect(body.backupCodes).toHaveLength(10);
    for (const code of body.backupCodes) expect(code).toMatch(/^[a-z0-9]{10}$/);

    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa'))).toEqual({
      totp: { enabled: true, createdAt: clock.now() },
      backupCodes: { remaining: 10 },
      passkeys: 0,
    });
    expect(json(await me(t, user.accessToken)).user.twoFactorEnabled).toBe(true);
    // Only hashes are stored.
    const env = t.project.development.id;
    const stored = await t.store.db
      .selectFrom('user_backup_codes')
      .select('code_hash')
      .where('environment_id', '=', env)
      .where('user_id', '=', user.userId)
      .execute();
    expect(stored).toHaveLength(10);
    for (const row of stored) expect(body.backupCodes).not.toContain(row.code_hash);
    const totp = await t.store.db
      .selectFrom('user_totp')
      .selectAll()
      .where('environment_id', '=', env)
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    expect(totp.secret).not.toContain(secret);
    expect(totp.secret!.startsWith('v1.')).toBe(true);
  });

  it('replaces a pending secret on a second call; the first one no longer confirms', async () => {
    const user = await signUp(t);
    const first = json(await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp')).secret;
    const second = json(await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp')).secret;
    expect(second).not.toBe(first);
    const old = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: totpCode(first, clock.now()) });
    expect(old.statusCode).toBe(401);
    const ok = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: totpCode(second, clock.now()) });
    expect(ok.statusCode).toBe(200);
  });

  it('refuses a verify with nothing pending (400) and a second setup while enabled (409)', async () => {
    const user = await signUp(t);
    const nothing = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: '123456' });
    expect(nothing.statusCode).toBe(400);
    await enableTotp(t, user.accessToken, clock.now);
    expect((await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp')).statusCode).toBe(409);
  });

  it('removes TOTP within 10 minutes of a verification, with the backup codes (the last second factor)', async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken, clock.now);
    const removed = await mfaCall(t, user.accessToken, 'DELETE', '/v1/me/mfa/totp');
    expect(removed.statusCode).toBe(204);
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa'))).toEqual({
      totp: { enabled: false },
      backupCodes: { remaining: 0 },
      passkeys: 0,
    });
    expect(json(await me(t, user.accessToken)).user.twoFactorEnabled).toBe(false);
    expect((await mfaCall(t, user.accessToken, 'DELETE', '/v1/me/mfa/totp')).statusCode).toBe(404);
  });

  it('needs reverification after 10 minutes to remove TOTP or replace backup codes', async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken, clock.now);
    clock.advance(10 * 60_000 + 1000);
    // A refresh is not a verification: the new token is as stale as the session.
    const accessToken = json(await refresh(t, user.refreshToken)).session.accessToken;
    for (const [method, url] of [
      ['DELETE', '/v1/me/mfa/totp'],
      ['POST', '/v1/me/mfa/backup-codes'],
    ] as const) {
      const refused = await mfaCall(t, accessToken, method, url);
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('reverification_required');
    }
    expect(json(await mfaCall(t, accessToken, 'GET', '/v1/me/mfa')).totp.enabled).toBe(true);

    const fresh = await reverify(t, accessToken, { code: totpCode(secret, clock.now()) });
    expect(fresh.statusCode).toBe(200);
    const regenerated = await mfaCall(t, accessToken, 'POST', '/v1/me/mfa/backup-codes');
    expect(regenerated.statusCode).toBe(200);
    expect(json(regenerated).backupCodes).toHaveLength(10);
    expect(json(await mfaCall(t, accessToken, 'GET', '/v1/me/mfa')).backupCodes.remaining).toBe(10);
  });

  it('refuses backup codes without TOTP (409)', async () => {
    const user = await signUp(t);
    expect((await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/backup-codes')).statusCode).toBe(409);
  });

  it('records user.updated on every second-factor change', async () => {
    const user = await signUp(t);
    const environmentId = t.project.development.id;
    const before = (await userUpdates(t, environmentId, user.userId)).length;
    await enableTotp(t, user.accessToken, clock.now);
    await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/backup-codes');
    await mfaCall(t, user.accessToken, 'DELETE', '/v1/me/mfa/totp');
    const updates = (await userUpdates(t, environmentId, user.userId)).slice(before);
    expect(updates.map((u) => u.twoFactorEnabled)).toEqual([true, true, false]);
  });

  it('refuses enrolment with 403 method_disabled while mfa is "off"', async () => {
    const project = await t.createProject('Mfa off');
    await t.setSettings(project.development.id, { mfa: 'off' });
    const user = await signUp(t, { environment: project.development });
    const refused = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp');
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('method_disabled');
    expect((await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/totp/verify', { code: '123456' })).statusCode).toBe(403);
  });

  it('is on the session surface only', async () => {
    for (const credential of [t.project.development.publishableKey, t.project.development.secretKey]) {
      expect((await t.call({ method: 'GET', url: '/v1/me/mfa', credential })).statusCode).toBe(403);
    }
  });
});
