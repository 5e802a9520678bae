import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { start } from '../helpers/flows.js';
import { decodeJwt, GOOD_PASSWORD, json, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { enableTotp, mfaCall, secondFactor, totpCode } from '../helpers/mfa.js';
import { enablePasskeys, LOCAL_ORIGIN, passkeyCall, passkeyOptions, passkeyVerify, registerPasskey } from '../helpers/passkeys.js';
import { testDb } from '../helpers/store.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

const START_AGAIN = /start the sign-in again/i;

function expectRefused(response: { statusCode: number; body: string; json(): any }, status = 401, code = 'invalid_credentials') {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.json().error.code).toBe(code);
}

/**
 * A passkey at the second step of a sign-in (DESIGN "One door to a session", "Passkey setup inside
 * an attempt"): options bound to the attempt, the assertion at POST /v1/auth/signin/second-factor,
 * a passkey registered inside a setup attempt, each held against the other ceremonies' challenges,
 * other users, other environments, replays and races.
 */
describe(`a passkey as the second factor, attacked (${testDb()})`, () => {
  let t: TestApp;
  const dev = () => t.project.development;

  beforeAll(async () => {
    t = await startTestApp();
    await t.setSettings(dev().id, { accessTokenTtlSeconds: 3600 });
  });
  afterAll(() => t.close());

  const options = (attemptId: string, environment: TestEnvironment = dev()) =>
    passkeyCall(t, environment.publishableKey, 'POST', '/v1/auth/passkey/options', { attemptId });
  const passkeySetup = (attemptId: string, environment: TestEnvironment = dev()) =>
    passkeyCall(t, environment.publishableKey, 'POST', '/v1/auth/signin/second-factor/passkey-setup', { attemptId });
  const withPasskey = (attemptId: string, response: unknown, environment: TestEnvironment = dev()) =>
    secondFactor(t, { attemptId, factor: 'passkey', response }, environment);

  async function required<T>(work: () => Promise<T>): Promise<T> {
    await t.setSettings(dev().id, { mfa: 'required' });
    try {
      return await work();
    } finally {
      await t.setSettings(dev().id, { mfa: 'optional' });
    }
  }

  /** A user with a password and one passkey (mfa "optional": the passkey is their second factor). */
  async function userWithPasskey() {
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
    expect((await registerPasskey(t, user.accessToken, authenticator)).statusCode).toBe(201);
    return { ...user, authenticator };
  }

  /** The password step: a needs_second_factor (or setup) attempt. */
  async function attemptFor(email: string, status = 'needs_second_factor') {
    const first = await signIn(t, email, GOOD_PASSWORD);
    expect(first.statusCode, first.body).toBe(202);
    expect(json(first).status).toBe(status);
    return json(first) as { attemptId: string; factors: string[] };
  }

  /** Options for the attempt, answered by the authenticator. */
  async function assertionFor(attemptId: string, authenticator: SoftAuthenticator) {
    const started = await options(attemptId);
    expect(started.statusCode, started.body).toBe(200);
    return authenticator.get(json(started).options);
  }

  /** A user created by the operator with a password only: under "required" they must set up a factor. */
  async function passwordOnlyUser() {
    const created = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: dev().secretKey,
      payload: { email: uniqueEmail('setup'), password: GOOD_PASSWORD, emailVerified: true },
    });
    expect(created.statusCode, created.body).toBe(201);
    return json(created) as { id: string; email: string };
  }

  async function sessionsOf(userId: string) {
    const rows = await t.store.db
      .selectFrom('sessions')
      .select('id')
      .where('environment_id', '=', dev().id as never)
      .where('user_id', '=', userId)
      .execute();
    return rows.length;
  }

  async function wrongTries(attemptId: string) {
    const row = await t.store.db
      .selectFrom('sign_in_attempts')
      .select('wrong_tries')
      .where('environment_id', '=', dev().id as never)
      .where('id', '=', sha256(attemptId))
      .executeTakeFirst();
    return row?.wrong_tries;
  }

  async function passkeysOf(userId: string) {
    return t.store.db
      .selectFrom('passkeys')
      .select(['counter', 'last_used_at'])
      .where('environment_id', '=', dev().id as never)
      .where('user_id', '=', userId)
      .execute();
  }

  describe('the happy paths', () => {
    it('password, then the passkey: amr ["pwd","passkey"], fva [0,0], counter and lastUsedAt recorded', async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      expect(attempt.factors).toEqual(['passkey']);
      const started = await options(attempt.attemptId);
      expect(started.statusCode, started.body).toBe(200);
      expect(json(started).attemptId).toBe(attempt.attemptId);
      expect(json(started).options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([
        user.authenticator.credentials[0]!.id.toString('base64url'),
      ]);
      const done = await withPasskey(attempt.attemptId, user.authenticator.get(json(started).options));
      expect(done.statusCode, done.body).toBe(200);
      expect(json(done).user).toEqual({ id: user.userId, email: user.email });
      expect(json(done).backupCodes).toBeUndefined();
      expect(decodeJwt(json(done).session.accessToken).payload).toMatchObject({ sub: user.userId, amr: ['pwd', 'passkey'], fva: [0, 0] });
      const [row] = await passkeysOf(user.userId);
      expect(Number(row!.counter)).toBe(user.authenticator.credentials[0]!.counter);
      expect(row!.last_used_at).not.toBeNull();
    });

    it('under mfa "required", a passkey set up inside the attempt: registered with the attempt spent, signed in, no backup codes', async () => {
      await required(async () => {
        const user = await passwordOnlyUser();
        const attempt = await attemptFor(user.email, 'needs_second_factor_setup');
        expect(attempt.factors).toEqual(['totp', 'passkey']);
        const setup = await passkeySetup(attempt.attemptId);
        expect(setup.statusCode, setup.body).toBe(200);
        const creation = json(setup).options;
        expect(creation).toMatchObject({
          rp: { id: 'localhost' },
          user: { name: user.email },
          excludeCredentials: [],
          authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
          attestation: 'none',
        });
        expect(creation.user.id).not.toBe(user.id);
        const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
        const done = await withPasskey(attempt.attemptId, authenticator.create(creation));
        expect(done.statusCode, done.body).toBe(200);
        expect(json(done).backupCodes).toBeUndefined();
        expect(decodeJwt(json(done).session.accessToken).payload).toMatchObject({ amr: ['pwd', 'passkey'], fva: [0, 0] });
        const accessToken = json(done).session.accessToken as string;
        expect(json(await mfaCall(t, accessToken, 'GET', '/v1/me/mfa'))).toMatchObject({ passkeys: 1, backupCodes: { remaining: 0 } });
        expect(json(await mfaCall(t, accessToken, 'GET', '/v1/me')).user.twoFactorEnabled).toBe(true);
        // The attempt is spent; the next sign-in asks for the new passkey, which works.
        expectRefused(await withPasskey(attempt.attemptId, authenticator.create(creation)));
        const next = await attemptFor(user.email);
        expect(next.factors).toEqual(['passkey']);
        expect((await withPasskey(next.attemptId, await assertionFor(next.attemptId, authenticator))).statusCode).toBe(200);
      });
    });
  });

  describe('a password alone never enrols', () => {
    const totpSetup = (attemptId: string) =>
      passkeyCall(t, dev().publishableKey, 'POST', '/v1/auth/signin/second-factor/totp-setup', { attemptId });
    const totpOf = async (userId: string) =>
      (
        await t.store.db
          .selectFrom('user_totp')
          .select('secret')
          .where('environment_id', '=', dev().id as never)
          .where('user_id', '=', userId)
          .executeTakeFirst()
      )?.secret ?? null;

    it('a setup attempt cannot add a passkey once the account set up TOTP in another sign-in', async () => {
      await required(async () => {
        const user = await passwordOnlyUser();
        // The attacker (the password only) starts first and holds the registration options.
        const attacker = await attemptFor(user.email, 'needs_second_factor_setup');
        const creation = json(await passkeySetup(attacker.attemptId)).options;
        // The owner signs in meanwhile and sets up TOTP.
        const owner = await attemptFor(user.email, 'needs_second_factor_setup');
        const secret = json(await totpSetup(owner.attemptId)).secret as string;
        const enrolled = await secondFactor(t, { attemptId: owner.attemptId, factor: 'totp', code: totpCode(secret) });
        expect(enrolled.statusCode, enrolled.body).toBe(200);

        expectRefused(await withPasskey(attacker.attemptId, new SoftAuthenticator(LOCAL_ORIGIN).create(creation)), 409, 'conflict');
        expectRefused(await passkeySetup(attacker.attemptId), 409, 'conflict');
        expectRefused(await totpSetup(attacker.attemptId), 409, 'conflict');
        expect(await passkeysOf(user.id)).toHaveLength(0);
        expect(await sessionsOf(user.id)).toBe(1);
      });
    });

    it('a setup attempt cannot enrol TOTP once the account added a passkey in another sign-in', async () => {
      await required(async () => {
        const user = await passwordOnlyUser();
        const attacker = await attemptFor(user.email, 'needs_second_factor_setup');
        const secret = json(await totpSetup(attacker.attemptId)).secret as string;
        const owner = await attemptFor(user.email, 'needs_second_factor_setup');
        const creation = json(await passkeySetup(owner.attemptId)).options;
        const enrolled = await withPasskey(owner.attemptId, new SoftAuthenticator(LOCAL_ORIGIN).create(creation));
        expect(enrolled.statusCode, enrolled.body).toBe(200);

        expectRefused(await secondFactor(t, { attemptId: attacker.attemptId, factor: 'totp', code: totpCode(secret) }), 409, 'conflict');
        expect(await totpOf(user.id)).toBeNull();
        expect(await passkeysOf(user.id)).toHaveLength(1);
        expect(await sessionsOf(user.id)).toBe(1);
      });
    });

    it('passkey-setup on a needs_second_factor attempt is refused, with no creation options', async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      const refused = await passkeySetup(attempt.attemptId);
      expectRefused(refused, 400, 'invalid_request');
      expect(refused.body).not.toContain('challenge');
    });

    it('a registration sent on a needs_second_factor attempt registers nothing and counts as a wrong try', async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      const started = await options(attempt.attemptId);
      // A registration made over the attempt's (authentication) challenge.
      const registration = new SoftAuthenticator(LOCAL_ORIGIN).create({
        ...json(started).options,
        rp: { id: 'localhost' },
        user: { id: 'AAAA' },
      });
      expectRefused(await withPasskey(attempt.attemptId, registration));
      expect(await passkeysOf(user.userId)).toHaveLength(1);
      expect(await wrongTries(attempt.attemptId)).toBe(1);
    });

    it('an assertion sent on a setup attempt does not complete it', async () => {
      const victim = await userWithPasskey();
      await required(async () => {
        const user = await passwordOnlyUser();
        const attempt = await attemptFor(user.email, 'needs_second_factor_setup');
        const setup = await passkeySetup(attempt.attemptId);
        // An assertion of an existing passkey over the setup's challenge is not a registration.
        const assertion = victim.authenticator.get({ rpId: 'localhost', challenge: json(setup).options.challenge, allowCredentials: [] });
        expectRefused(await withPasskey(attempt.attemptId, assertion), 400, 'invalid_request');
        expect(await sessionsOf(user.id)).toBe(0);
        expect(await passkeysOf(user.id)).toHaveLength(0);
        // It counts as a wrong try of the attempt, like a wrong code.
        expect(await wrongTries(attempt.attemptId)).toBe(1);
      });
    });

    it('options for a setup attempt at /v1/auth/passkey/options are refused', async () => {
      await required(async () => {
        const user = await passwordOnlyUser();
        const attempt = await attemptFor(user.email, 'needs_second_factor_setup');
        expectRefused(await options(attempt.attemptId), 400, 'invalid_request');
      });
    });
  });

  describe("another user's passkey", () => {
    it("an assertion of another user's credential is refused, as a wrong try", async () => {
      const user = await userWithPasskey();
      const other = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      const started = await options(attempt.attemptId);
      const foreign = other.authenticator.get({ ...json(started).options, allowCredentials: [] });
      expectRefused(await withPasskey(attempt.attemptId, foreign));
      expect(await sessionsOf(user.userId)).toBe(1); // the sign-up's
    });

    it('an assertion carrying the credential id of the user but signed by another key is refused', async () => {
      const user = await userWithPasskey();
      const other = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      const started = await options(attempt.attemptId);
      const forged = other.authenticator.get(
        { ...json(started).options, allowCredentials: [] },
        {
          credentialId: user.authenticator.credentials[0]!.id,
          userHandle: null,
        },
      );
      expectRefused(await withPasskey(attempt.attemptId, forged));
    });
  });

  describe('challenges of other ceremonies', () => {
    it("a first-factor (discoverable) challenge's assertion does not complete an attempt", async () => {
      await enablePasskeys(t);
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      await options(attempt.attemptId);
      const discoverable = await passkeyOptions(t, user.authenticator);
      expectRefused(await withPasskey(attempt.attemptId, user.authenticator.get(discoverable.options)));
      expect(await sessionsOf(user.userId)).toBe(1);
    });

    it("an attempt's challenge does not serve the first-factor door, by its id or by its stored key", async () => {
      await enablePasskeys(t);
      const user = await userWithPasskey();
      for (const key of [(id: string) => id, (id: string) => `sia:${sha256(id)}`]) {
        const attempt = await attemptFor(user.email);
        const assertion = await assertionFor(attempt.attemptId, user.authenticator);
        expectRefused(await passkeyVerify(t, dev(), key(attempt.attemptId), assertion));
      }
      expect(await sessionsOf(user.userId)).toBe(1);
    });

    it("a reverification challenge's assertion does not complete an attempt", async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      const reverify = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/reverify/passkey-options');
      expect(reverify.statusCode, reverify.body).toBe(200);
      expectRefused(await withPasskey(attempt.attemptId, user.authenticator.get(json(reverify).options)));
    });

    it('the challenge is kept as the hash of the attempt id, never the id itself', async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      await options(attempt.attemptId);
      const rows = await t.store.db
        .selectFrom('passkey_challenges')
        .select('attempt_id')
        .where('environment_id', '=', dev().id as never)
        .execute();
      const keys = rows.map((r) => r.attempt_id);
      expect(keys).toContain(`sia:${sha256(attempt.attemptId)}`);
      expect(keys).not.toContain(attempt.attemptId);
    });
  });

  describe('replays', () => {
    it("an attempt's assertion replayed on the next attempt is refused", async () => {
      const user = await userWithPasskey();
      const first = await attemptFor(user.email);
      const assertion = await assertionFor(first.attemptId, user.authenticator);
      expect((await withPasskey(first.attemptId, assertion)).statusCode).toBe(200);
      expectRefused(await withPasskey(first.attemptId, assertion));
      const second = await attemptFor(user.email);
      await options(second.attemptId);
      expectRefused(await withPasskey(second.attemptId, assertion));
    });

    it('a new options call voids the previous challenge of the attempt', async () => {
      const user = new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false); // synced: the counter does not stop a replay
      const signedUp = await signUp(t);
      await registerPasskey(t, signedUp.accessToken, user);
      const attempt = await attemptFor(signedUp.email);
      const stale = await assertionFor(attempt.attemptId, user);
      await options(attempt.attemptId);
      expectRefused(await withPasskey(attempt.attemptId, stale));
      // Any verify spends the challenge: the stale answer used up the fresh one too.
      const fresh = await assertionFor(attempt.attemptId, user);
      expect((await withPasskey(attempt.attemptId, fresh)).statusCode).toBe(200);
    });

    it('a wrong answer spends the challenge, and five kill the attempt', async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      for (let i = 0; i < 5; i++) {
        const started = await options(attempt.attemptId);
        expect(started.statusCode, started.body).toBe(200);
        expectRefused(await withPasskey(attempt.attemptId, user.authenticator.get(json(started).options, { uv: false })));
      }
      const refused = await options(attempt.attemptId);
      expectRefused(refused);
      expect(json(refused).error.message).toMatch(START_AGAIN);
      expect(await sessionsOf(user.userId)).toBe(1);
    });
  });

  describe('other environments', () => {
    it("another environment's key gets nothing from an attempt: options, setup or completion", async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      // A server-side caller (no Origin): the attempt is looked up before any RP ID is decided.
      const prod = t.project.production;
      expectRefused(await start(t, 'passkey/options', { attemptId: attempt.attemptId }, prod));
      expectRefused(await start(t, 'signin/second-factor/passkey-setup', { attemptId: attempt.attemptId }, prod));
      const assertion = await assertionFor(attempt.attemptId, user.authenticator);
      expectRefused(await withPasskey(attempt.attemptId, assertion, prod));
      // The attempt itself is untouched by those: it still completes here.
      expect((await withPasskey(attempt.attemptId, assertion)).statusCode).toBe(200);
    });
  });

  describe('races', () => {
    it('one assertion sent four times at once signs in once', async () => {
      const user = await userWithPasskey();
      const attempt = await attemptFor(user.email);
      const assertion = await assertionFor(attempt.attemptId, user.authenticator);
      const answers = await Promise.all([0, 1, 2, 3].map(() => withPasskey(attempt.attemptId, assertion)));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401, 401, 401]);
      expect(await sessionsOf(user.userId)).toBe(2);
    });

    it('a passkey and a backup code racing on one attempt give one session', async () => {
      const user = await userWithPasskey();
      const { backupCodes } = await enableTotp(t, user.accessToken);
      const attempt = await attemptFor(user.email);
      expect(attempt.factors).toEqual(['totp', 'backup_code', 'passkey']);
      const assertion = await assertionFor(attempt.attemptId, user.authenticator);
      const answers = await Promise.all([
        withPasskey(attempt.attemptId, assertion),
        secondFactor(t, { attemptId: attempt.attemptId, factor: 'backup_code', code: backupCodes[0] }),
      ]);
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
      expect(await sessionsOf(user.userId)).toBe(2);
    });

    it('a setup attempt completed at once with TOTP and with a passkey enrols exactly one factor', async () => {
      await required(async () => {
        const user = await passwordOnlyUser();
        const attempt = await attemptFor(user.email, 'needs_second_factor_setup');
        const totp = json(
          await passkeyCall(t, dev().publishableKey, 'POST', '/v1/auth/signin/second-factor/totp-setup', { attemptId: attempt.attemptId }),
        );
        const creation = json(await passkeySetup(attempt.attemptId)).options;
        const answers = await Promise.all([
          withPasskey(attempt.attemptId, new SoftAuthenticator(LOCAL_ORIGIN).create(creation)),
          secondFactor(t, { attemptId: attempt.attemptId, factor: 'totp', code: totpCode(totp.secret) }),
        ]);
        // The loser, having waited on the user's row, finds the attempt spent.
        expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
        expect(await sessionsOf(user.id)).toBe(1);
        const passkeys = (await passkeysOf(user.id)).length;
        const totpOn = await t.store.db
          .selectFrom('user_totp')
          .select('secret')
          .where('environment_id', '=', dev().id as never)
          .where('user_id', '=', user.id)
          .executeTakeFirst();
        expect(passkeys + (totpOn?.secret ? 1 : 0)).toBe(1);
      });
    });
  });
});

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
