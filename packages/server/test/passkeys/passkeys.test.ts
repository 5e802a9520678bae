import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, me, signUp } from '../helpers/identity.js';
import { mfaCall, reverify } from '../helpers/mfa.js';
import { enablePasskeys, LOCAL_ORIGIN, passkeyCall, registerPasskey, signInWithPasskey } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

const clock = testClock(1_860_000_000_000);
const MINUTE = 60_000;

describe('passkeys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    await t.setSettings(t.project.development.id, { accessTokenTtlSeconds: 3600 });
    await enablePasskeys(t);
  });
  afterAll(() => t.close());

  it('GET /v1/environment shows authMethods.passkey, false by default', async () => {
    const other = await t.createProject('fresh');
    const environment = await t.call({ method: 'GET', url: '/v1/environment', credential: other.development.publishableKey });
    expect(json(environment).authMethods.passkey).toBe(false);
    const enabled = await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.development.publishableKey });
    expect(json(enabled).authMethods.passkey).toBe(true);
  });

  it('registration options follow DESIGN: resident key and user verification required, no attestation, -7/-8/-257, a random user handle', async () => {
    const user = await signUp(t);
    const started = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration');
    expect(started.statusCode).toBe(200);
    const { options } = json(started);
    expect(options.rp.id).toBe('localhost');
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(options.attestation).toBe('none');
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-7, -8, -257]);
    expect(options.excludeCredentials).toEqual([]);
    expect(options.user.name).toBe(user.email);
    expect(Buffer.from(options.user.id, 'base64url').toString('utf8')).not.toContain(user.userId);
    expect(Buffer.from(options.user.id, 'base64url')).toHaveLength(32);
    // The same handle at every registration of the user; another user has another.
    const again = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration')).options;
    expect(again.user.id).toBe(options.user.id);
    const other = await signUp(t);
    expect(json(await passkeyCall(t, other.accessToken, 'POST', '/v1/me/passkeys/registration')).options.user.id).not.toBe(options.user.id);
  });

  it('registers, lists, renames and counts a passkey; the user has two factors then', async () => {
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
    const created = await registerPasskey(t, user.accessToken, authenticator, {}, 'Laptop');
    expect(created.statusCode).toBe(201);
    const passkey = json(created);
    expect(passkey).toEqual({
      id: expect.stringMatching(/^passkey_/),
      name: 'Laptop',
      createdAt: clock.now(),
      lastUsedAt: null,
      backedUp: false,
    });
    expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data).toEqual([passkey]);
    const renamed = await passkeyCall(t, user.accessToken, 'PATCH', `/v1/me/passkeys/${passkey.id}`, { name: 'Work laptop' });
    expect(json(renamed).name).toBe('Work laptop');
    const status = json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa'));
    expect(status.passkeys).toBe(1);
    expect(status.backupCodes.remaining).toBe(0);
    expect(json(await me(t, user.accessToken)).user.twoFactorEnabled).toBe(true);
    // The next options exclude it.
    const next = json(await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration')).options;
    expect(next.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([authenticator.credentials[0]!.id.toString('base64url')]);
    // The operators see it too.
    const listed = await t.call({ method: 'GET', url: `/v1/users/${user.userId}/passkeys`, credential: t.project.development.secretKey });
    expect(json(listed).data.map((p: { id: string }) => p.id)).toEqual([passkey.id]);
  });

  for (const alg of ['ES256', 'EdDSA'] as const) {
    it(`signs in with a ${alg} passkey: amr passkey, both fva values 0, lastUsedAt set`, async () => {
      const user = await signUp(t);
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN, alg);
      expect((await registerPasskey(t, user.accessToken, authenticator)).statusCode).toBe(201);
      clock.advance(MINUTE);
      const signedIn = await signInWithPasskey(t, authenticator);
      expect(signedIn.statusCode).toBe(200);
      const body = json(signedIn);
      expect(body.user).toEqual({ id: user.userId, email: user.email });
      const claims = decodeJwt(body.session.accessToken).payload;
      expect(claims.sub).toBe(user.userId);
      expect(claims.amr).toEqual(['passkey']);
      expect(claims.fva).toEqual([0, 0]);
      expect(json(await passkeyCall(t, user.accessToken, 'GET', '/v1/me/passkeys')).data[0].lastUsedAt).toBe(clock.now());
    });
  }

  it('a synced passkey (counter always 0) signs in again and again', async () => {
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false);
    await registerPasskey(t, user.accessToken, authenticator);
    for (let i = 0; i < 3; i++) expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(200);
  });

  it('adding and removing a passkey each send user.updated with twoFactorEnabled', async () => {
    const user = await signUp(t);
    const events = async () =>
      (
        await t.store.db
          .selectFrom('webhook_events')
          .select(['body'])
          .where('environment_id', '=', t.project.development.id)
          .where('type', '=', 'user.updated')
          .orderBy('id')
          .execute()
      )
        .map((row) => JSON.parse(row.body).data)
        .filter((data: { id: string }) => data.id === user.userId);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
    const { id } = json(await registerPasskey(t, user.accessToken, authenticator));
    expect((await events()).map((d: { twoFactorEnabled: boolean }) => d.twoFactorEnabled)).toEqual([true]);
    await passkeyCall(t, user.accessToken, 'DELETE', `/v1/me/passkeys/${id}`);
    expect((await events()).map((d: { twoFactorEnabled: boolean }) => d.twoFactorEnabled)).toEqual([true, false]);
  });

  it('passkey sign-in is 403 method_disabled while authMethods.passkey is off; registration while mfa is on still works', async () => {
    const project = await t.createProject('off');
    const refused = await passkeyCall(t, project.development.publishableKey, 'POST', '/v1/auth/passkey/options', {});
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('method_disabled');
    const user = await signUp(t, { environment: project.development });
    expect((await registerPasskey(t, user.accessToken, new SoftAuthenticator(LOCAL_ORIGIN))).statusCode).toBe(201);
  });

  it('with authMethods.passkey and mfa both off, registration is 403 method_disabled', async () => {
    const project = await t.createProject('all off');
    await t.setSettings(project.development.id, { mfa: 'off' });
    const user = await signUp(t, { environment: project.development });
    const refused = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration');
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('method_disabled');
  });

  it('removal needs a recent verification; a passkey reverifies, and then the last one goes with twoFactorEnabled', async () => {
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
    const { id } = json(await registerPasskey(t, user.accessToken, authenticator));
    clock.advance(10 * MINUTE + 1);
    const refused = await passkeyCall(t, user.accessToken, 'DELETE', `/v1/me/passkeys/${id}`);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('reverification_required');

    const started = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/reverify/passkey-options');
    expect(started.statusCode).toBe(200);
    const { options } = json(started);
    expect(options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([authenticator.credentials[0]!.id.toString('base64url')]);
    expect(options.userVerification).toBe('required');
    const reverified = await reverify(t, user.accessToken, { passkey: authenticator.get(options) });
    expect(reverified.statusCode).toBe(200);
    const claims = decodeJwt(json(reverified).session.accessToken).payload;
    expect(claims.amr).toEqual(['pwd', 'passkey']);
    expect(claims.fva).toEqual([0, 0]);

    const deleted = await passkeyCall(t, json(reverified).session.accessToken, 'DELETE', `/v1/me/passkeys/${id}`);
    expect(deleted.statusCode).toBe(200);
    expect(json(deleted)).toEqual({ id, deleted: true });
    expect(json(await me(t, user.accessToken)).user.twoFactorEnabled).toBe(false);
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).passkeys).toBe(0);
    expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(401);
  });

  it('reverify passkey options without a passkey say what to do instead', async () => {
    const user = await signUp(t);
    const refused = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/reverify/passkey-options');
    expect(refused.statusCode).toBe(400);
    expect(json(refused).error.message).toContain('password');
    expect((await reverify(t, user.accessToken, { password: GOOD_PASSWORD })).statusCode).toBe(200);
  });

  it('an operator removes a passkey of a user (a lost device)', async () => {
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
    const { id } = json(await registerPasskey(t, user.accessToken, authenticator));
    const sk = t.project.development.secretKey;
    const removed = await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}/passkeys/${id}`, credential: sk });
    expect(removed.statusCode).toBe(200);
    expect(json(await t.call({ method: 'GET', url: `/v1/users/${user.userId}/passkeys`, credential: sk })).data).toEqual([]);
    expect((await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}/passkeys/${id}`, credential: sk })).statusCode).toBe(404);
    expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(401);
  });

  it("the support reset (DELETE /v1/users/{id}/mfa) removes the user's passkeys too", async () => {
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
    await registerPasskey(t, user.accessToken, authenticator);
    const reset = await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}/mfa`, credential: t.project.development.secretKey });
    expect(reset.statusCode).toBe(200);
    expect(json(reset).twoFactorEnabled).toBe(false);
    expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(401);
  });

  it('a production environment uses its domain as the RP ID and accepts its subdomains over https', async () => {
    const project = await t.createProject('prod', 'example.test');
    await enablePasskeys(t, project.production);
    const user = await signUp(t, { environment: project.production });
    const authenticator = new SoftAuthenticator('https://app.example.test');
    const started = await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys/registration', undefined, 'https://app.example.test');
    expect(json(started).options.rp.id).toBe('example.test');
    const response = authenticator.create(json(started).options);
    expect((await passkeyCall(t, user.accessToken, 'POST', '/v1/me/passkeys', { response }, 'https://app.example.test')).statusCode).toBe(
      201,
    );
    const apex = new SoftAuthenticator('https://example.test');
    apex.credentials.push(...authenticator.credentials);
    expect((await signInWithPasskey(t, apex, project.production)).statusCode).toBe(200);
  });
});
