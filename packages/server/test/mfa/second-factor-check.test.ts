import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/changes.js';
import { MfaService } from '../../src/mfa/service.js';
import { SignInThrottle } from '../../src/ratelimit/throttle.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall, totpCode } from '../helpers/mfa.js';

/**
 * What the sign-in step (the door, next release) will call: `factorsOf` and `verifySecondFactor`,
 * through a service built over the app's store and instance secret, as the composition root does.
 */
describe('the second-factor check the sign-in step calls', () => {
  let t: TestApp;
  let mfa: MfaService;
  beforeAll(async () => {
    t = await startTestApp();
    const unused = () => {
      throw new Error('not used by these checks');
    };
    mfa = new MfaService({
      store: t.store,
      sessions: { recordFactor: unused, reissue: unused, lastVerification: unused, revokeAllForUser: unused },
      identity: { findUser: unused, lockUser: unused },
      tenancy: { getProject: unused },
      throttle: new SignInThrottle({ clock: Date.now }),
      now: Date.now,
      instanceSecret: t.instanceSecret,
    });
  });
  afterAll(() => t.close());

  const environment = () => t.tenancy.getEnvironment(t.project.development.id);

  it('factorsOf lists totp then backup_code, and backup_code only while unused codes remain', async () => {
    const user = await signUp(t);
    expect(await mfa.factorsOf(await environment(), user.userId)).toEqual([]);
    const { backupCodes } = await enableTotp(t, user.accessToken);
    expect(await mfa.factorsOf(await environment(), user.userId)).toEqual(['totp', 'backup_code']);
    for (const code of backupCodes) {
      expect(await mfa.verifySecondFactor(await environment(), user.userId, { factor: 'backup_code', code })).toBe('backup_code');
    }
    expect(await mfa.factorsOf(await environment(), user.userId)).toEqual(['totp']);
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).backupCodes.remaining).toBe(0);
  });

  it("verifySecondFactor accepts a right code once, inside the caller's transaction, and refuses a wrong one", async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken);
    const env = await environment();
    const next = totpCode(secret, Date.now(), 1);
    await expect(
      inTransaction(t.store.db, (tx) => mfa.verifySecondFactor(env, user.userId, { factor: 'totp', code: next }, tx)),
    ).resolves.toBe('totp');
    await expect(mfa.verifySecondFactor(env, user.userId, { factor: 'totp', code: next })).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
    await expect(mfa.verifySecondFactor(env, user.userId, { factor: 'backup_code', code: 'nope' })).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
  });

  it("another environment's user has no factors here", async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken);
    const production = await t.tenancy.getEnvironment(t.project.production.id);
    expect(await mfa.factorsOf(production, user.userId)).toEqual([]);
  });
});
