import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../../server/test/helpers/app.js';
import { createGatehouse, GatehouseError, isReverificationRequired, type Gatehouse } from '../src/index.js';
import { GOOD_PASSWORD, startLiveGatehouse, uniqueEmail, type LiveGatehouse } from './helpers/gatehouse.js';
import { totp } from './helpers/totp.js';

/** Second factors, reverification, API keys and the sessions list, against a real server whose clock the test moves. */
let live: LiveGatehouse;
const clock = testClock();
const clients: Gatehouse[] = [];
beforeAll(async () => {
  live = await startLiveGatehouse({ now: clock.now });
});
afterAll(async () => {
  for (const gh of clients) gh.destroy();
  await live.close();
});

async function signedUp(): Promise<Gatehouse> {
  const gh = createGatehouse({ publishableKey: live.t.project.development.publishableKey, baseUrl: live.url });
  clients.push(gh);
  await gh.load();
  await gh.signUp({ email: uniqueEmail('mfa'), password: GOOD_PASSWORD, firstName: 'Ada' });
  return gh;
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as GatehouseError,
  );

/** Eleven minutes pass: the session's last verification is out of the 10-minute window. */
const staleSession = () => clock.advance(11 * 60_000);

describe('@gatehouse/js: second factors and reverification', () => {
  it('enables TOTP, regenerates backup codes and removes TOTP, reverifying with a code, a backup code and the password', async () => {
    const gh = await signedUp();
    expect(await gh.user.mfa.get()).toEqual({ totp: { enabled: false }, backupCodes: { remaining: 0 }, passkeys: 0 });

    const { secret, otpauthUrl } = await gh.user.mfa.totp.create();
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\/.+secret=/);
    const { backupCodes } = await gh.user.mfa.totp.verify(totp(secret, clock.now()));
    expect(backupCodes).toHaveLength(10);
    expect(gh.state.user?.twoFactorEnabled).toBe(true);
    expect(await gh.user.mfa.get()).toMatchObject({ totp: { enabled: true }, backupCodes: { remaining: 10 } });

    staleSession();
    const refused = await refusal(gh.user.mfa.backupCodes.regenerate());
    expect(refused).toBeInstanceOf(GatehouseError);
    expect(refused.code).toBe('reverification_required');
    expect(isReverificationRequired(refused)).toBe(true);

    // A code of the next step (the enrolment spent this one): the held token now says totp.
    const before = (await gh.getToken())!;
    const state = await gh.reverify({ code: totp(secret, clock.now(), 1) });
    expect(await gh.getToken()).not.toBe(before);
    expect(state.session?.claims.amr).toEqual(['pwd', 'totp']);
    expect((state.session?.claims.fva as number[])[1]).toBe(0);
    const regenerated = (await gh.user.createBackupCode()).backupCodes;
    expect(regenerated).toHaveLength(10);
    expect(regenerated).not.toContain(backupCodes[0]);

    staleSession();
    expect((await refusal(gh.user.mfa.totp.remove())).code).toBe('reverification_required');
    // An old backup code no longer works; a new one does, once.
    expect((await refusal(gh.reverify({ backupCode: backupCodes[0]! }))).code).toBe('invalid_credentials');
    await gh.reverify({ backupCode: regenerated[0]! });
    expect((await refusal(gh.reverify({ backupCode: regenerated[0]! }))).code).toBe('invalid_credentials');
    expect(gh.state.session?.claims.amr).toEqual(['pwd', 'totp', 'backup_code']);
    await gh.user.mfa.totp.remove();
    expect(gh.state.user?.twoFactorEnabled).toBe(false);
    expect(await gh.user.mfa.get()).toMatchObject({ totp: { enabled: false }, backupCodes: { remaining: 0 } });

    // Clerk's names reach the same calls.
    const again = await gh.user.createTOTP();
    await gh.user.verifyTOTP({ code: totp(again.secret, clock.now()) });
    staleSession();
    expect((await refusal(gh.user.disableTOTP())).code).toBe('reverification_required');
    await gh.reverify({ password: GOOD_PASSWORD });
    await gh.user.disableTOTP();
    expect(gh.state.user?.twoFactorEnabled).toBe(false);
  });

  it('reverify() takes exactly one factor, and a wrong one is refused without changing the held token', async () => {
    const gh = await signedUp();
    const held = await gh.getToken();
    expect((await refusal(gh.reverify({ password: GOOD_PASSWORD, code: '123456' } as never))).code).toBe('invalid_request');
    expect((await refusal(gh.reverify({ password: `${GOOD_PASSWORD}-wrong` }))).code).toBe('invalid_credentials');
    expect(await gh.getToken()).toBe(held);
    expect(gh.state.isSignedIn).toBe(true);
  });

  it('the sessions list shows each session’s factors and device', async () => {
    const gh = await signedUp();
    const sessions = await gh.sessions.list();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ current: true, amr: ['pwd'] });
    expect(sessions[0]).toHaveProperty('userAgent');
  });
});

describe('@gatehouse/js: API keys', () => {
  it("creates, lists and revokes the user's own keys, after a reverification when the session is stale", async () => {
    const gh = await signedUp();
    const created = await gh.user.apiKeys.create({ name: 'CI', scopes: ['invoices:read'], expiresInSeconds: 3600 });
    expect(created.secret).toMatch(/^gh_ak_/);
    expect(created.apiKey).toMatchObject({ name: 'CI', scopes: ['invoices:read'], lastUsedAt: null });
    expect(created.apiKey.expiresAt).toBe(created.apiKey.createdAt + 3600 * 1000);
    expect((await gh.user.apiKeys.list()).map((k) => k.id)).toEqual([created.apiKey.id]);

    const verified = await live.t.call({
      method: 'POST',
      url: '/v1/api-keys/verify',
      credential: live.t.project.development.secretKey,
      payload: { secret: created.secret },
    });
    expect(verified.statusCode).toBe(200);

    staleSession();
    expect((await refusal(gh.user.apiKeys.create({ name: 'Late' }))).code).toBe('reverification_required');
    await gh.reverify({ password: GOOD_PASSWORD });
    await gh.user.apiKeys.create({ name: 'Late' });

    expect(await gh.user.apiKeys.revoke(created.apiKey.id)).toEqual({ id: created.apiKey.id, deleted: true });
    expect((await gh.user.apiKeys.list()).map((k) => k.name)).toEqual(['Late']);
    const after = await live.t.call({
      method: 'POST',
      url: '/v1/api-keys/verify',
      credential: live.t.project.development.secretKey,
      payload: { secret: created.secret },
    });
    expect(after.statusCode).toBe(401);
  });

  it("manages the organization's keys and its MFA rule", async () => {
    const gh = await signedUp();
    const org = await gh.organizations.create({ name: 'Analytical Engines' });
    await gh.setActiveOrganization(org.id);
    const created = await gh.organization.apiKeys.create({ name: 'Billing sync' });
    expect(created.apiKey.subject).toBe(org.id);
    expect((await gh.organization.apiKeys.list()).map((k) => k.id)).toEqual([created.apiKey.id]);
    await gh.organization.apiKeys.revoke(created.apiKey.id);
    expect(await gh.organization.apiKeys.list()).toEqual([]);

    // Requiring MFA needs this session to have verified a second factor itself.
    expect((await refusal(gh.organization.update({ mfaRequired: true }))).code).toBe('second_factor_required');
    const { secret } = await gh.user.mfa.totp.create();
    await gh.user.mfa.totp.verify(totp(secret, clock.now()));
    expect((await gh.organization.update({ mfaRequired: true })).mfaRequired).toBe(true);
    expect(gh.state.organization).toMatchObject({ id: org.id, mfaRequired: true });
    expect((await gh.organization.update({ mfaRequired: false })).mfaRequired).toBe(false);
  });
});
