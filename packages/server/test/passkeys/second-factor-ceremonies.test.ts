import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/changes.js';
import { IdentityService } from '../../src/identity/service.js';
import { MfaService } from '../../src/mfa/service.js';
import { PasskeyCeremonies } from '../../src/passkeys/ceremonies.js';
import { SignInChallenges } from '../../src/passkeys/sign-in-challenges.js';
import { SignInThrottle } from '../../src/ratelimit/throttle.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/identity.js';
import { enableTotp } from '../helpers/mfa.js';
import { enablePasskeys, LOCAL_ORIGIN, registerPasskey } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

/**
 * What the second-factor step of the door calls: `factorsOf` with passkeys, and the ceremonies
 * bound to its own attempt and user (a passkey as the second factor; a passkey set up inside a
 * `needs_second_factor_setup` attempt), through services built over the app's store.
 */
describe('the passkey ceremonies the second-factor step calls', () => {
  let t: TestApp;
  let mfa: MfaService;
  let ceremonies: PasskeyCeremonies;
  beforeAll(async () => {
    t = await startTestApp();
    await enablePasskeys(t);
    const unused = () => {
      throw new Error('not used by these checks');
    };
    ceremonies = new PasskeyCeremonies({ store: t.store, now: Date.now, signIns: new SignInChallenges(t.instanceSecret) });
    mfa = new MfaService({
      store: t.store,
      sessions: { recordFactor: unused, reissue: unused, lastVerification: unused, revokeAllForUser: unused },
      identity: { findUser: unused, lockUser: unused },
      tenancy: { getProject: unused },
      throttle: new SignInThrottle({ clock: Date.now }),
      now: Date.now,
      instanceSecret: t.instanceSecret,
      passkeys: ceremonies,
    });
  });
  afterAll(() => t.close());

  const environment = () => t.tenancy.getEnvironment(t.project.development.id);

  it('factorsOf lists totp, backup_code, passkey in that order, each only when the user has it', async () => {
    const user = await signUp(t);
    expect((await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN))).statusCode).toBe(201);
    expect(await mfa.factorsOf(await environment(), user.userId)).toEqual(['passkey']);
    await enableTotp(t, user.accessToken);
    expect(await mfa.factorsOf(await environment(), user.userId)).toEqual(['totp', 'backup_code', 'passkey']);
  });

  it("an attempt's options list the user's passkeys, and only that user's assertion verifies", async () => {
    const env = await environment();
    const user = await signUp(t);
    const other = await signUp(t);
    const mine = new SoftAuthenticator(LOCAL_ORIGIN);
    const theirs = new SoftAuthenticator(LOCAL_ORIGIN);
    await registerPasskey(t, user.accessToken, mine);
    await registerPasskey(t, other.accessToken, theirs);

    const { attemptId, options } = await ceremonies.authenticationOptions(
      env,
      { attemptId: 'sia_test1', userId: user.userId },
      LOCAL_ORIGIN,
    );
    expect(attemptId).toBe('sia_test1');
    expect((options.allowCredentials as Array<{ id: string }>).map((c) => c.id)).toEqual([mine.credentials[0]!.id.toString('base64url')]);
    await expect(ceremonies.verifyAuthentication(env, attemptId, mine.get(options) as never, user.userId)).resolves.toMatchObject({
      userId: user.userId,
    });

    const again = await ceremonies.authenticationOptions(env, { attemptId: 'sia_test2', userId: user.userId }, LOCAL_ORIGIN);
    const foreign = theirs.get({ ...again.options, allowCredentials: [] });
    await expect(ceremonies.verifyAuthentication(env, 'sia_test2', foreign as never, user.userId)).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
  });

  it("a passkey set up inside an attempt: registration options, verify, then stored in the caller's transaction", async () => {
    const env = await environment();
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN, 'EdDSA');
    const options = await ceremonies.registrationOptions(env, { id: user.userId, email: user.email }, 'sia_setup1', LOCAL_ORIGIN, 'Acme');
    const credential = await ceremonies.verifyRegistration(env, user.userId, 'sia_setup1', authenticator.create(options) as never);
    // As the step does: the user's row locked first, in the transaction that stores the passkey.
    const identity = new IdentityService({ store: t.store, sessions: {} as never, acceptImageUrl: {} as never, now: Date.now });
    const row = await inTransaction(t.store.db, async (tx) =>
      ceremonies.store(tx, env, (await identity.lockUser(tx, env, user.userId))!, credential, 'Set up at sign-in'),
    );
    expect(row.user_id).toBe(user.userId);
    expect(await mfa.factorsOf(env, user.userId)).toEqual(['passkey']);
    // The attempt's challenge is spent: the same response again is refused.
    await expect(
      ceremonies.verifyRegistration(env, user.userId, 'sia_setup1', authenticator.create(options) as never),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});
