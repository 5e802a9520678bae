import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { json, signUp } from '../helpers/identity.js';
import { mfaCall, reverify } from '../helpers/mfa.js';
import {
  enablePasskeys,
  LOCAL_ORIGIN,
  passkeyCall,
  passkeyOptions,
  passkeyVerify,
  registerPasskey,
  signInWithPasskey,
} from '../helpers/passkeys.js';
import { SoftAuthenticator, type Tamper } from '../helpers/webauthn.js';

const clock = testClock(1_860_000_000_000);
const MINUTE = 60_000;

function expectRefused(response: { statusCode: number; json(): any }, status = 401, code = 'invalid_credentials') {
  expect(response.statusCode).toBe(status);
  expect(response.json().error.code).toBe(code);
}

describe('passkey attacks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    await t.setSettings(t.project.development.id, { accessTokenTtlSeconds: 3600 });
    await enablePasskeys(t);
  });
  afterAll(() => t.close());

  async function sessionCount(userId: string) {
    const rows = await t.store.db
      .selectFrom('sessions')
      .select('id')
      .where('environment_id', '=', t.project.development.id as never)
      .where('user_id', '=', userId)
      .execute();
    return rows.length;
  }

  /** A user with one registered passkey on a localhost page. */
  async function userWithPasskey(authenticator = new SoftAuthenticator(LOCAL_ORIGIN)) {
    const user = await signUp(t);
    const created = await registerPasskey(t, user.accessToken, authenticator);
    expect(created.statusCode).toBe(201);
    return { user, authenticator, passkey: json(created) };
  }

  describe('replayed challenge', () => {
    // A synced passkey (counter always 0): only the spent challenge stops the replay, not the counter.
    it('an assertion sent twice signs in once', async () => {
      const { authenticator } = await userWithPasskey(new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false));
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      const response = authenticator.get(options);
      expect((await passkeyVerify(t, t.project.development, attemptId, response)).statusCode).toBe(200);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, response));
    });

    it('the same assertion sent four times at once signs in exactly once', async () => {
      const { authenticator } = await userWithPasskey(new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false));
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      const response = authenticator.get(options);
      const answers = await Promise.all(Array.from({ length: 4 }, () => passkeyVerify(t, t.project.development, attemptId, response)));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401, 401, 401]);
    });

    it('a wrong answer spends the challenge: the right one after it is refused', async () => {
      const { authenticator } = await userWithPasskey();
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, authenticator.get(options, { uv: false })));
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, authenticator.get(options)));
    });

    it('an assertion signed over another challenge is refused', async () => {
      const { authenticator } = await userWithPasskey();
      const first = await passkeyOptions(t, authenticator);
      const second = await passkeyOptions(t, authenticator);
      expectRefused(await passkeyVerify(t, t.project.development, second.attemptId, authenticator.get(first.options)));
    });

    it('a new registration options call voids the previous challenge of the session', async () => {
      const user = await signUp(t);
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
      const first = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration')).options;
      await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration');
      const refused = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys', { response: authenticator.create(first) });
      expectRefused(refused, 400, 'invalid_request');
      expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data).toEqual([]);
    });

    it('a challenge older than 5 minutes is refused', async () => {
      const { authenticator } = await userWithPasskey();
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      clock.advance(5 * MINUTE + 1);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, authenticator.get(options)));
    });
  });

  describe('a forged attempt id (the sign-in challenge travels in it, under a MAC)', () => {
    /** The attempt id with one part changed: `pka_{l|d}{expiry}.{challenge}.{mac}`. */
    function forge(attemptId: string, part: 'expiry' | 'rp' | 'challenge' | 'mac', challenge?: string): string {
      const [head, encodedChallenge, mac] = attemptId.split('.') as [string, string, string];
      const kind = head.slice(4, 5);
      const expiry = head.slice(5);
      if (part === 'expiry') return `pka_${kind}${(parseInt(expiry, 36) + 60 * MINUTE).toString(36)}.${encodedChallenge}.${mac}`;
      if (part === 'rp') return `pka_${kind === 'l' ? 'd' : 'l'}${expiry}.${encodedChallenge}.${mac}`;
      if (part === 'challenge') return `${head}.${challenge}.${mac}`;
      return `${head}.${encodedChallenge}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    }

    it('a later expiry, another RP ID, another challenge or a changed MAC is refused; the genuine attempt still signs in', async () => {
      const { authenticator } = await userWithPasskey();
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      const response = authenticator.get(options);
      for (const part of ['expiry', 'rp', 'mac'] as const) {
        expectRefused(await passkeyVerify(t, t.project.development, forge(attemptId, part), response));
      }
      // An attacker's own challenge, signed by the victim's authenticator on a phishing page, fails the MAC.
      const chosen = 'A'.repeat(43);
      const phished = authenticator.get({ ...options, challenge: chosen });
      expectRefused(await passkeyVerify(t, t.project.development, forge(attemptId, 'challenge', chosen), phished));
      expectRefused(await passkeyVerify(t, t.project.development, 'pka_l0.x.y', response));
      // A forged id opens no challenge, so it spends none: the real answer still works.
      expect((await passkeyVerify(t, t.project.development, attemptId, response)).statusCode).toBe(200);
    });

    it('an expired attempt id is refused even when its MAC is genuine', async () => {
      const { authenticator } = await userWithPasskey();
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      clock.advance(5 * MINUTE);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, authenticator.get(options)));
    });

    it('nodes whose clocks differ: an answered attempt is kept past its expiry, so a node behind cannot take a replay', async () => {
      const { authenticator } = await userWithPasskey(new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false));
      const issuedAt = clock.now();
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      const response = authenticator.get(options);
      expect((await passkeyVerify(t, t.project.development, attemptId, response)).statusCode).toBe(200);
      // A node 2 minutes ahead sweeps (another sign-in) once the attempt has expired by its clock…
      clock.set(issuedAt + 5 * MINUTE + 2 * MINUTE);
      expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(200);
      // …and a node on time still opens the attempt id: the replay must find it answered.
      const latest = clock.now();
      clock.set(issuedAt + 4 * MINUTE);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, response));
      clock.set(latest);
    });

    it('options write nothing: a flood of options calls leaves no rows behind', async () => {
      const { authenticator } = await userWithPasskey();
      const count = async () =>
        (
          await t.store.db
            .selectFrom('passkey_challenges')
            .select('attempt_id')
            .where('environment_id', '=', t.project.development.id as never)
            .execute()
        ).length;
      const before = await count();
      for (let i = 0; i < 20; i++) await passkeyOptions(t, authenticator);
      expect(await count()).toBe(before);
    });
  });

  describe('foreign origin', () => {
    it('an assertion made on another site is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { origin: 'https://evil.example' }));
    });

    it('an assertion made on another localhost scheme or on 127.0.0.1 is refused', async () => {
      const { authenticator } = await userWithPasskey();
      for (const origin of ['https://localhost:3000', 'http://127.0.0.1:3000', 'http://localhost:3000/path']) {
        expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { origin }));
      }
    });

    it('a page on 127.0.0.1 does not get RP ID localhost: it is held to the domain, which it is not on', async () => {
      const { authenticator } = await userWithPasskey();
      const started = await passkeyCall(
        t,
        t.project.development.publishableKey,
        'POST',
        '/v1/auth/passkey/options',
        {},
        'http://127.0.0.1:3000',
      );
      expect(json(started).options.rpId).toBe('example.test');
      const credential = authenticator.credentials[0]!;
      const assertion = authenticator.get(json(started).options, { origin: 'http://127.0.0.1:3000', rpId: 'localhost' }, credential);
      expectRefused(await passkeyVerify(t, t.project.development, json(started).attemptId, assertion));
    });

    it('a registration made on another site is refused', async () => {
      const user = await signUp(t);
      const refused = await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN), { origin: 'https://evil.example' });
      expectRefused(refused, 400, 'invalid_request');
    });

    it('a production environment refuses localhost pages and lookalike domains', async () => {
      const project = await t.createProject('prod', 'example.test');
      await enablePasskeys(t, project.production);
      const user = await signUp(t, { environment: project.production });
      const authenticator = new SoftAuthenticator('https://example.test');
      const started = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration', undefined, 'https://example.test');
      const response = authenticator.create(json(started).options);
      expect((await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys', { response }, 'https://example.test')).statusCode).toBe(
        201,
      );
      for (const origin of [
        'http://localhost:3000',
        'https://evilexample.test',
        'http://example.test',
        'https://example.test.evil.example',
      ]) {
        expectRefused(await signInWithPasskey(t, authenticator, project.production, { origin }));
      }
    });
  });

  describe('wrong RP ID', () => {
    it('an assertion for another RP ID is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { rpId: 'evil.example' }));
    });

    it('a registration for another RP ID is refused', async () => {
      const user = await signUp(t);
      expectRefused(
        await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN), { rpId: 'evil.example' }),
        400,
        'invalid_request',
      );
    });

    it('the RP ID is never taken from the body', async () => {
      const refused = await passkeyCall(t, t.project.development.publishableKey, 'POST', '/v1/auth/passkey/options', {
        rpId: 'evil.example',
      });
      expect(refused.statusCode).toBe(400);
    });
  });

  describe('user verification and presence', () => {
    it('UV missing: an assertion without user verification is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { uv: false }));
    });

    it('UP missing: an assertion without user presence is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { up: false }));
    });

    it('a registration without user verification or presence is refused', async () => {
      const user = await signUp(t);
      for (const tamper of [{ uv: false }, { up: false }] as Tamper[]) {
        expectRefused(await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN), tamper), 400, 'invalid_request');
      }
    });
  });

  describe('cloned counter', () => {
    it('an assertion whose counter does not grow is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expect((await signInWithPasskey(t, authenticator, t.project.development, { counter: 5 })).statusCode).toBe(200);
      // The clone presents the same counter, or a lower one.
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { counter: 5 }));
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { counter: 3 }));
      // Zero once the counter is non-zero is a clone too.
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { counter: 0 }));
      expect((await signInWithPasskey(t, authenticator, t.project.development, { counter: 6 })).statusCode).toBe(200);
    });
  });

  describe('cloned counter, raced', () => {
    it('two assertions over two challenges with the same counter, at once: exactly one signs in', async () => {
      const { authenticator } = await userWithPasskey();
      expect((await signInWithPasskey(t, authenticator, t.project.development, { counter: 10 })).statusCode).toBe(200);
      // The original and its clone each answer a challenge of their own, both with counter 11.
      const [first, second] = await Promise.all([passkeyOptions(t, authenticator), passkeyOptions(t, authenticator)]);
      const answers = await Promise.all([
        passkeyVerify(t, t.project.development, first.attemptId, authenticator.get(first.options, { counter: 11 })),
        passkeyVerify(t, t.project.development, second.attemptId, authenticator.get(second.options, { counter: 11 })),
      ]);
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
    });
  });

  describe('a banned user', () => {
    it('gets 403 user_banned from a passkey, and no session', async () => {
      const { user, authenticator } = await userWithPasskey();
      const banned = await t.call({ method: 'POST', url: `/v1/users/${user.userId}/ban`, credential: t.project.development.secretKey });
      expect(banned.statusCode, banned.body).toBe(200);
      const sessionsBefore = await sessionCount(user.userId);
      expectRefused(await signInWithPasskey(t, authenticator), 403, 'user_banned');
      expect(await sessionCount(user.userId)).toBe(sessionsBefore);
    });
  });

  describe('a banned user, unbanned', () => {
    it('the refused attempt stays spent: its assertion does not sign in after the unban', async () => {
      const { user, authenticator } = await userWithPasskey(new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false));
      const admin = (action: 'ban' | 'unban') =>
        t.call({ method: 'POST', url: `/v1/users/${user.userId}/${action}`, credential: t.project.development.secretKey });
      expect((await admin('ban')).statusCode).toBe(200);
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      const response = authenticator.get(options);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, response), 403, 'user_banned');
      expect((await admin('unban')).statusCode).toBe(200);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, response));
      expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(200);
    });
  });

  describe('a passkey removed during a sign-in', () => {
    it('a synced passkey (counter 0) removed between options and verify no longer signs in', async () => {
      const { user, authenticator, passkey } = await userWithPasskey(new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false));
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      const response = authenticator.get(options);
      const removed = await t.call({
        method: 'DELETE',
        url: `/v1/users/${user.userId}/passkeys/${passkey.id}`,
        credential: t.project.development.secretKey,
      });
      expect(removed.statusCode, removed.body).toBeLessThan(300);
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, response));
    });
  });

  describe('an account filled with passkeys', () => {
    it('holds at most 25: the 26th is refused, with nothing stored', async () => {
      const user = await signUp(t);
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
      for (let i = 0; i < 25; i++) expect((await registerPasskey(t, user.accessToken, authenticator)).statusCode).toBe(201);
      const refused = await registerPasskey(t, user.accessToken, authenticator);
      expectRefused(refused, 400, 'invalid_request');
      expect(refused.json().error.message).toMatch(/25 passkeys/);
      expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data).toHaveLength(25);
    });

    it.each([
      ['an exponent other than 65537 (a costly check for every forged assertion)', { exponent: 3 }],
      ['a modulus under 2048 bits', { bits: 1024 }],
    ])('an RSA key with %s is refused at registration', async (_, rsa) => {
      const user = await signUp(t);
      const refused = await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN, 'RS256'), { rsa });
      expectRefused(refused, 400, 'invalid_request');
      expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data).toHaveLength(0);
    });

    it('an RSA passkey of 2048 bits with exponent 65537 registers and signs in', async () => {
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN, 'RS256');
      await userWithPasskey(authenticator);
      expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(200);
    });

    it('a registration whose public key is padded past any real key is refused', async () => {
      const user = await signUp(t);
      const refused = await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN), { padPublicKey: 2_000 });
      expectRefused(refused, 400, 'invalid_request');
      expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data).toHaveLength(0);
    });
  });

  describe("another environment's credential", () => {
    it('a passkey of one environment never signs in to another', async () => {
      const { authenticator } = await userWithPasskey();
      const other = await t.createProject('other');
      await enablePasskeys(t, other.development);
      expectRefused(await signInWithPasskey(t, authenticator, other.development));
      // The same project's production environment neither, even signed for its RP ID.
      await enablePasskeys(t, t.project.production);
      const prod = json(
        await passkeyCall(t, t.project.production.publishableKey, 'POST', '/v1/auth/passkey/options', {}, 'https://example.test'),
      );
      const assertion = authenticator.get(prod.options, { origin: 'https://example.test' }, authenticator.credentials[0]);
      expectRefused(await passkeyVerify(t, t.project.production, prod.attemptId, assertion, 'https://example.test'));
    });

    it("another environment's attempt id is refused, even with a passkey registered there", async () => {
      const { authenticator } = await userWithPasskey();
      const other = await t.createProject('moved-attempts');
      await enablePasskeys(t, other.development);
      const there = await signUp(t, { environment: other.development });
      expect((await registerPasskey(t, there.accessToken, authenticator)).statusCode).toBe(201);
      const theirs = authenticator.credentials[1]!;
      // The attempt id of this environment, answered by the passkey of the other: only the MAC's
      // environment tells them apart (the challenge inside is the one signed).
      const here = await passkeyOptions(t, authenticator);
      expectRefused(await passkeyVerify(t, other.development, here.attemptId, authenticator.get(here.options, {}, theirs)));
      const own = await passkeyOptions(t, authenticator, other.development);
      expect((await passkeyVerify(t, other.development, own.attemptId, authenticator.get(own.options, {}, theirs))).statusCode).toBe(200);
    });

    it("another environment's attempt id is refused", async () => {
      const { authenticator } = await userWithPasskey();
      const other = await t.createProject('attempts');
      await enablePasskeys(t, other.development);
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      expectRefused(await passkeyVerify(t, other.development, attemptId, authenticator.get(options)));
    });
  });

  describe('a webauthn.create response used to sign in', () => {
    it('the registration response itself is refused at verify', async () => {
      const user = await signUp(t);
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
      const { attemptId, options } = await passkeyOptions(t, authenticator);
      // A registration made over the sign-in challenge.
      const started = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration')).options;
      const created = authenticator.create({ ...started, challenge: options.challenge });
      expectRefused(await passkeyVerify(t, t.project.development, attemptId, created));
    });

    it('an assertion whose client data says webauthn.create is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { type: 'webauthn.create' }));
    });

    it("a session's registration challenge does not serve a sign-in", async () => {
      const { user, authenticator } = await userWithPasskey();
      const started = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration');
      const { options } = json(started);
      const sessionId = decodeSessionId(user.accessToken);
      const assertion = authenticator.get({ rpId: options.rp.id, challenge: options.challenge, allowCredentials: [] });
      expectRefused(await passkeyVerify(t, t.project.development, `registration:${sessionId}`, assertion));
    });
  });

  describe("a user's own challenge at the first-factor door", () => {
    it('a reverification challenge answered at /v1/auth/passkey/verify does not sign in', async () => {
      const { user, authenticator } = await userWithPasskey();
      const { options } = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/reverify/passkey-options'));
      const assertion = authenticator.get(options);
      expectRefused(await passkeyVerify(t, t.project.development, `reverify:${decodeSessionId(user.accessToken)}`, assertion));
    });

    it("burning another ceremony's challenge: naming a session's registration at the first-factor door leaves it usable", async () => {
      const user = await signUp(t);
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
      const started = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration');
      expect(started.statusCode).toBe(200);
      // Session ids are no secret (the token's sid): anyone with the publishable key can name the key.
      const junk = { id: 'AA', rawId: 'AA', type: 'public-key', response: { clientDataJSON: Buffer.from('{}').toString('base64url') } };
      expectRefused(await passkeyVerify(t, t.project.development, `registration:${decodeSessionId(user.accessToken)}`, junk));
      const created = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys', {
        response: authenticator.create(json(started).options),
      });
      expect(created.statusCode, created.body).toBe(201);
    });

    it('options for an attempt id that is no second-factor attempt are refused', async () => {
      const { authenticator } = await userWithPasskey();
      const { attemptId } = await passkeyOptions(t, authenticator);
      const refused = await passkeyCall(t, t.project.development.publishableKey, 'POST', '/v1/auth/passkey/options', { attemptId });
      expectRefused(refused);
    });
  });

  describe("a userHandle not the owner's", () => {
    it("an assertion carrying another user's handle is refused", async () => {
      const alice = await userWithPasskey();
      const bob = await userWithPasskey();
      const bobHandle = bob.authenticator.credentials[0]!.userHandle;
      expectRefused(await signInWithPasskey(t, alice.authenticator, t.project.development, { userHandle: bobHandle }));
    });

    it('a discoverable assertion without a user handle is refused', async () => {
      const { authenticator } = await userWithPasskey();
      expectRefused(await signInWithPasskey(t, authenticator, t.project.development, { userHandle: null }));
    });
  });

  describe('registration of a duplicate credential id', () => {
    it('the same credential id registered again in the environment is 409 conflict, by anyone', async () => {
      const { authenticator } = await userWithPasskey();
      const credentialId = authenticator.credentials[0]!.id;
      const mallory = await signUp(t);
      const refused = await registerPasskey(t, mallory.accessToken, new SoftAuthenticator(LOCAL_ORIGIN), { credentialId });
      expectRefused(refused, 409, 'conflict');
      expect(json(await passkeyCall(t, mallory.accessToken, 'GET', '/v1/me/passkeys')).data).toEqual([]);
    });
  });

  describe('malformed responses', () => {
    it('garbage in every field is refused as a bad credential or request, never a 500', async () => {
      const { user, authenticator } = await userWithPasskey();
      const junk = Buffer.from('not cbor, not json').toString('base64url');
      type Assertion = ReturnType<SoftAuthenticator['get']>;
      const bends: Array<(good: Assertion) => unknown> = [
        (good) => ({ ...good, response: { ...good.response, clientDataJSON: junk } }),
        (good) => ({ ...good, response: { ...good.response, authenticatorData: junk } }),
        (good) => ({ ...good, response: { ...good.response, signature: junk } }),
        (good) => ({ ...good, response: { clientDataJSON: good.response.clientDataJSON } }),
        (good) => ({ ...good, id: junk, rawId: junk }),
      ];
      for (const bend of bends) {
        // Each over a fresh challenge, so the garbage is what gets read.
        const { attemptId, options } = await passkeyOptions(t, authenticator);
        const answer = await passkeyVerify(t, t.project.development, attemptId, bend(authenticator.get(options, { counter: 1_000 })));
        expect(answer.statusCode).toBe(401);
      }
      const started = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration')).options;
      const created = authenticator.create(started);
      const refused = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys', {
        response: { ...created, response: { ...created.response, attestationObject: junk } },
      });
      expect(refused.statusCode).toBe(400);
      const wrongShape = await passkeyVerify(t, t.project.development, 'pka_x', { id: 'a', type: 'nope' });
      expect(wrongShape.statusCode).toBe(400);
    });
  });

  describe('reverification', () => {
    it("a sign-in challenge's assertion does not reverify a session", async () => {
      const { user, authenticator } = await userWithPasskey();
      const { options } = await passkeyOptions(t, authenticator);
      await passkeyCall(t, user.accessToken, 'POST', '/v1/me/reverify/passkey-options');
      expectRefused(await reverify(t, user.accessToken, { passkey: authenticator.get(options) }));
    });

    it("another user's passkey does not reverify a session", async () => {
      const { user } = await userWithPasskey();
      const mallory = await userWithPasskey();
      const { options } = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/reverify/passkey-options'));
      const assertion = mallory.authenticator.get({ ...options, allowCredentials: [] });
      expectRefused(await reverify(t, user.accessToken, { passkey: assertion }));
    });
  });

  describe('an actor session (impersonation)', () => {
    it('cannot add, rename or remove a passkey of the user it acts as', async () => {
      const { user, passkey } = await userWithPasskey();
      // What an actor token's session records (the actor tokens arrive separately): amr ["actor"].
      await t.store.db
        .updateTable('sessions')
        .set({ amr: JSON.stringify(['actor']) })
        .where('environment_id', '=', t.project.development.id)
        .where('id', '=', decodeSessionId(user.accessToken))
        .execute();
      expectRefused(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration'), 403, 'forbidden');
      expectRefused(
        await passkeyCall(t, user.accessToken, 'PATCH', `/v1/me/passkeys/${passkey.id}`, { name: 'mine now' }),
        403,
        'forbidden',
      );
      expectRefused(await passkeyCall(t, user.accessToken, 'DELETE', `/v1/me/passkeys/${passkey.id}`), 403, 'forbidden');
      expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data).toEqual([passkey]);
    });
  });

  describe('a stale session', () => {
    it('cannot plant a passkey of its own: registration needs a verification within 10 minutes', async () => {
      const user = await signUp(t);
      clock.advance(10 * MINUTE + 1);
      expectRefused(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration'), 403, 'reverification_required');
    });
  });

  describe("a squatter's passkey on someone else's address", () => {
    it('is removed when the owner first proves the address', async () => {
      const { user: squatter, authenticator } = await userWithPasskey();
      expect((await start(t, 'magic-link', { email: squatter.email, redirectUrl: REDIRECT })).statusCode).toBe(202);
      const [email] = await outbox(t, squatter.email);
      const owner = await start(t, 'magic-link/verify', { token: tokenFrom(email!) });
      expect(owner.statusCode).toBe(200);
      expect(json(await mfaCall(t, json(owner).session.accessToken, 'GET', '/v1/me/mfa')).passkeys).toBe(0);
      expectRefused(await signInWithPasskey(t, authenticator));
    });
  });
});

function decodeSessionId(accessToken: string): string {
  return JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')).sid;
}
