import { createHmac, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observable } from '../helpers/responses.js';
import { SigningKeys } from '../../src/sessions/signing-keys.js';
import { signInput } from '../../src/sessions/tokens.js';
import { BASE_URL, startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { b64url, decodeJwt, GOOD_PASSWORD, json, me, refresh, signIn, signUp, type SignedIn } from '../helpers/identity.js';

const clock = testClock();

/**
 * Attacks on the access token and the session endpoints. Each forged token is otherwise valid
 * (signed with the environment's real key where the attack allows), so each refusal proves the one
 * check it names; the asserted message tells which check refused it.
 */
describe('access token and session attacks', () => {
  let t: TestApp;
  let user: SignedIn;
  let keys: SigningKeys;

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    user = await signUp(t);
    keys = new SigningKeys(t.store, t.instanceSecret, clock.now);
  });
  afterAll(() => t.close());

  async function forge(options: {
    environmentId?: string;
    header?: Record<string, unknown>;
    claims?: Record<string, unknown>;
    signWith?: string;
  }): Promise<string> {
    const environmentId = options.environmentId ?? t.project.development.id;
    const environment = await t.tenancy.getEnvironment(options.signWith ?? environmentId);
    const key = await keys.signingKey(environment);
    const { payload } = decodeJwt(user.accessToken);
    const header = { alg: key.alg, kid: key.kid, typ: 'at+jwt', ...options.header };
    const claims = { ...payload, iss: `${BASE_URL}/v1/environments/${environmentId}`, ...options.claims };
    const input = `${b64url(header)}.${b64url(claims)}`;
    return `${input}.${signInput(key.alg, Buffer.from(input), key.privateKey).toString('base64url')}`;
  }

  async function expectRefused(token: string, message: RegExp) {
    const response = await me(t, token);
    expect(response.statusCode).toBe(401);
    expect(json(response).error.code).toBe('unauthenticated');
    expect(json(response).error.message).toMatch(message);
  }

  it('accepts a correctly forged token (the control: the forging helper makes valid tokens)', async () => {
    expect((await me(t, await forge({}))).statusCode).toBe(200);
  });

  it('refuses alg "none"', async () => {
    const { payload, header } = decodeJwt(user.accessToken);
    await expectRefused(`${b64url({ ...header, alg: 'none' })}.${b64url(payload)}.`, /alg "none"/);
    await expectRefused(`${b64url({ ...header, alg: 'None' })}.${b64url(payload)}.`, /alg "none"/);
  });

  it('refuses HS256 signed with the public key as the HMAC secret', async () => {
    const { header, payload } = decodeJwt(user.accessToken);
    const jwks = json(await t.call({ method: 'GET', url: `/v1/environments/${t.project.development.id}/.well-known/jwks.json` }));
    const jwk = jwks.keys.find((k: { kid: string }) => k.kid === header.kid);
    for (const secret of [createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }), JSON.stringify(jwk)]) {
      const input = `${b64url({ ...header, alg: 'HS256' })}.${b64url(payload)}`;
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      await expectRefused(`${input}.${mac}`, /algorithm "HS256" does not match/);
    }
  });

  it('refuses a token of another environment presented as this one', async () => {
    const other = t.project.production;
    // Signed by the other environment's key, claiming this environment: its kid is not ours.
    await expectRefused(await forge({ signWith: other.id }), /Unknown signing key/);
    // Signed by the other environment's key but naming our kid: the signature fails.
    const ourKid = decodeJwt(user.accessToken).header.kid;
    await expectRefused(await forge({ signWith: other.id, header: { kid: ourKid } }), /signature is invalid/);
    // A genuine token of the other environment works only as itself.
    const otherUser = await signUp(t, { environment: other });
    const response = await me(t, otherUser.accessToken);
    expect(response.statusCode).toBe(200);
    expect(json(response).user.id).toBe(otherUser.userId);
    // and a user id of this environment in a token of the other is not found there.
    await expectRefused(await forge({ environmentId: other.id }), /session of this access token does not exist/);
  });

  it('refuses an issuer that is not exactly this service', async () => {
    await expectRefused(await forge({ claims: { iss: `https://evil.test/v1/environments/${t.project.development.id}` } }), /issuer/);
    await expectRefused(await forge({ claims: { iss: `${BASE_URL}/v1/environments/${t.project.development.id}/` } }), /issuer/);
  });

  it('refuses a wrong typ', async () => {
    await expectRefused(await forge({ header: { typ: 'JWT' } }), /typ/);
    const { typ: _typ, ...noTyp } = decodeJwt(user.accessToken).header;
    await expectRefused(await forge({ header: { ...noTyp, typ: undefined } }), /typ/);
  });

  it('refuses an expired token, allowing 5 s of skew', async () => {
    const now = Math.floor(clock.now() / 1000);
    await expectRefused(await forge({ claims: { iat: now - 400, nbf: now - 400, exp: now - 6 } }), /expired/);
    expect((await me(t, await forge({ claims: { iat: now - 300, nbf: now - 300, exp: now - 3 } }))).statusCode).toBe(200);

    // A token already verified once (and so remembered) is still refused once it expires.
    const fresh = await signUp(t);
    expect((await me(t, fresh.accessToken)).statusCode).toBe(200);
    clock.advance(305_000);
    await expectRefused(fresh.accessToken, /expired/);
  });

  it('refuses nbf in the future, allowing 5 s of skew', async () => {
    const now = Math.floor(clock.now() / 1000);
    await expectRefused(await forge({ claims: { nbf: now + 60, iat: now, exp: now + 300 } }), /nbf/);
    expect((await me(t, await forge({ claims: { nbf: now + 3, iat: now, exp: now + 300 } }))).statusCode).toBe(200);
  });

  it('refuses an unknown kid', async () => {
    await expectRefused(await forge({ header: { kid: 'key_00000000000000000000000000' } }), /Unknown signing key/);
  });

  it.each(['../../etc/passwd', 'key_"or 1=1--', "key_'", 'key_0000000000000000000000000/', '', 'key_%2e%2e'])(
    'refuses a kid with path or quote characters: %j',
    async (kid) => {
      await expectRefused(await forge({ header: { kid } }), /kid/);
    },
  );

  it('refuses a tampered payload', async () => {
    const [h, , s] = user.accessToken.split('.');
    const payload = { ...decodeJwt(user.accessToken).payload, sub: 'user_someoneelse' };
    await expectRefused(`${h}.${b64url(payload)}.${s}`, /signature is invalid/);
  });

  it('refuses a signature stripped to zero bytes', async () => {
    const [h, p] = (await forge({})).split('.');
    await expectRefused(`${h}.${p}.`, /signature is invalid/);
  });

  it('refuses a token signed by a key of the right algorithm that is not the environment key', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const [h, p] = (await forge({})).split('.');
    const signature = sign('sha256', Buffer.from(`${h}.${p}`), privateKey).toString('base64url');
    await expectRefused(`${h}.${p}.${signature}`, /signature is invalid/);
  });

  it('refuses garbage that merely looks like a JWT', async () => {
    await expectRefused('aaa.bbb.ccc', /not base64url-encoded JSON|not a JSON object/);
  });

  it('revokes the session on refresh-token reuse after the grace window', async () => {
    const victim = await signUp(t);
    const rotated = await refresh(t, victim.refreshToken);
    expect(rotated.statusCode).toBe(200);
    const successor = json(rotated).session;

    clock.advance(10_001);
    const reuse = await refresh(t, victim.refreshToken);
    expect(reuse.statusCode).toBe(401);
    expect(json(reuse).error).toMatchObject({ code: 'session_revoked', message: expect.stringMatching(/already used/) });

    // The whole session is gone: the successor and its access token are refused too.
    const afterReuse = await refresh(t, successor.refreshToken);
    expect(afterReuse.statusCode).toBe(401);
    expect(json(afterReuse).error.code).toBe('session_revoked');
    const profile = await me(t, successor.accessToken);
    expect(profile.statusCode).toBe(401);
    expect(json(profile).error.code).toBe('session_revoked');
  });

  it('revokes the session on reuse of a token two or more generations old', async () => {
    const victim = await signUp(t);
    let token = victim.refreshToken;
    for (let i = 0; i < 3; i++) {
      clock.advance(11_000);
      token = json(await refresh(t, token)).session.refreshToken;
    }
    const reuse = await refresh(t, victim.refreshToken);
    expect(reuse.statusCode).toBe(401);
    expect(json(reuse).error.code).toBe('session_revoked');
    expect(json(await refresh(t, token)).error.code).toBe('session_revoked');
  });

  it('refuses to refresh a signed-out session', async () => {
    const victim = await signUp(t);
    const out = await t.call({
      method: 'POST',
      url: '/v1/auth/signout',
      credential: t.project.development.publishableKey,
      payload: { refreshToken: victim.refreshToken },
    });
    expect(out.statusCode).toBe(204);
    const response = await refresh(t, victim.refreshToken);
    expect(response.statusCode).toBe(401);
    expect(json(response).error.code).toBe('session_revoked');
  });

  it('refuses a password change without currentPassword', async () => {
    const victim = await signUp(t);
    const response = await t.call({
      method: 'POST',
      url: '/v1/me/password',
      credential: victim.accessToken,
      payload: { newPassword: 'a completely new passphrase' },
    });
    expect(response.statusCode).toBe(401);
    expect(json(response).error).toMatchObject({ code: 'invalid_credentials', message: expect.stringMatching(/currentPassword/) });
    // and the old password still works
    expect((await signIn(t, victim.email, GOOD_PASSWORD)).statusCode).toBe(200);
  });

  it('answers sign-in for an unknown email exactly as for a wrong password', async () => {
    const wrongPassword = await signIn(t, user.email, 'not the right password');
    const unknownEmail = await signIn(t, `nobody.${Date.now()}@example.test`, 'not the right password');
    expect(unknownEmail.statusCode).toBe(401);
    expect(observable(unknownEmail)).toEqual(observable(wrongPassword));
  });

  it('refuses a publishable key on /v1/me', async () => {
    const response = await t.call({ method: 'GET', url: '/v1/me', credential: t.project.development.publishableKey });
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('credential_not_accepted');
  });
});
