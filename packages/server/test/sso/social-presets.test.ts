import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { jwtVerify, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { formPostFor, postForm } from '../helpers/social.js';
import { createConnection, enableSso, landing, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

const TEAM_ID = 'A1B2C3D4E5';
const KEY_ID = 'KEY1234567';
const SERVICES_ID = 'com.example.web';

/**
 * Apple, GitLab and LinkedIn stand at the real oidc-provider's place (their presets are OpenID
 * Connect). Apple's token endpoint is reached through a shim that checks the client secret as Apple
 * does (an ES256 JWT: kid, iss = Team ID, sub = Services ID, aud = appleid.apple.com, short-lived,
 * signed with the registered key) before handing the request on with the secret the test IdP knows.
 */
describe(`Social presets against a real OpenID Provider (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestOidcIdp;
  let applePublicKey: KeyObject;
  let applePrivatePem: string;
  const secretsSeen: { kid: string | undefined; claims: Record<string, unknown> }[] = [];
  const env = () => t.project.development;

  beforeAll(async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    applePublicKey = pair.publicKey;
    applePrivatePem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    idp = await startOidcIdp();
    const appleShim = async (url: string, init: { method: string; headers: Record<string, string>; body?: unknown }) => {
      if (init.method === 'POST' && url === `${idp.issuer}/token`) {
        const form = new URLSearchParams(String(init.body));
        const secret = form.get('client_secret') ?? '';
        if (secret.split('.').length === 3) {
          const { payload } = await jwtVerify(secret, applePublicKey, { algorithms: ['ES256'], issuer: TEAM_ID, audience: 'https://appleid.apple.com', subject: SERVICES_ID });
          secretsSeen.push({ kid: decodeProtectedHeader(secret).kid, claims: payload });
          form.set('client_secret', 'apple-registered-secret');
          return globalThis.fetch(url, { ...init, body: form.toString() } as RequestInit);
        }
      }
      return globalThis.fetch(url, init as RequestInit);
    };
    t = await startTestApp({ sso: { presetIssuers: { apple: idp.issuer, gitlab: idp.issuer, linkedin: idp.issuer }, fetch: appleShim } });
    await enableSso(t, env());
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  describe('apple', () => {
    let connection: { id: string; redirectUri: string };

    beforeAll(async () => {
      const created = await createConnection(t, env(), { type: 'oidc', preset: 'apple', name: 'Apple', domains: [], clientId: SERVICES_ID, teamId: TEAM_ID, keyId: KEY_ID, privateKey: applePrivatePem });
      expect(created.statusCode, created.body).toBe(201);
      connection = json(created);
      expect(connection).toMatchObject({ preset: 'apple', teamId: TEAM_ID, keyId: KEY_ID, scopes: ['openid', 'email', 'name'] });
      expect(created.body).not.toContain('PRIVATE KEY');
    });

    async function appleSignIn(login: string, user?: unknown) {
      idp.setClient({ clientId: SERVICES_ID, clientSecret: 'apple-registered-secret', redirectUri: connection.redirectUri, tokenEndpointAuthMethod: 'client_secret_post' });
      const url = new URL(json(await ssoStart(t, env(), { connectionId: connection.id })).url);
      expect(url.searchParams.get('response_mode')).toBe('form_post');
      const { action, fields } = await formPostFor(new TestBrowser(t), url.href, login);
      expect(action).toBe(connection.redirectUri);
      // Apple adds the name, once, as unsigned JSON beside the code.
      return landing(await postForm(t, action, user ? { ...fields, user: JSON.stringify(user) } : fields));
    }

    it('signs up with a private-relay address ("true" as a string), the name from the form post, and a client secret JWT Apple would accept', async () => {
      const relay = `${Math.random().toString(36).slice(2)}@privaterelay.appleid.com`;
      idp.accounts.set('001234.apple-1', { email: relay, email_verified: 'true' });
      const before = secretsSeen.length;
      const back = await appleSignIn('001234.apple-1', { name: { firstName: 'Tim', lastName: 'Apple' }, email: relay });
      expect(back.error, back.url.searchParams.get('error_description') ?? '').toBeNull();
      const signedIn = json(await ssoVerify(t, env(), back.token!));
      expect(json(await t.call({ method: 'GET', url: `/v1/users/${signedIn.user.id}`, credential: env().secretKey }))).toMatchObject({
        email: relay,
        emailVerified: true,
        firstName: 'Tim',
        lastName: 'Apple',
      });
      const secret = secretsSeen[before]!;
      expect(secret.kid).toBe(KEY_ID);
      expect((secret.claims.exp as number) - (secret.claims.iat as number)).toBeLessThanOrEqual(15_777_000);
      // No name the second time (Apple sends it once): still the same user.
      const again = await appleSignIn('001234.apple-1');
      expect(json(await ssoVerify(t, env(), again.token!)).user.id).toBe(signedIn.user.id);
    });

    it('a verified Apple email links the existing account; "false" creates nobody', async () => {
      const existing = await signUp(t);
      idp.accounts.set('001234.apple-2', { email: existing.email, email_verified: 'true' });
      const linked = await appleSignIn('001234.apple-2');
      expect(json(await ssoVerify(t, env(), linked.token!)).user.id).toBe(existing.userId);
      idp.accounts.set('001234.apple-3', { email: uniqueEmail('apple-unverified'), email_verified: 'false' });
      expect((await appleSignIn('001234.apple-3')).error).toBe('email_not_verified');
    });

    it('an id_token posted in the form is never read: the identity comes from the token endpoint', async () => {
      idp.accounts.set('001234.apple-4', { email: uniqueEmail('apple-real'), email_verified: true });
      idp.setClient({ clientId: SERVICES_ID, clientSecret: 'apple-registered-secret', redirectUri: connection.redirectUri, tokenEndpointAuthMethod: 'client_secret_post' });
      const url = json(await ssoStart(t, env(), { connectionId: connection.id })).url;
      const { action, fields } = await formPostFor(new TestBrowser(t), url, '001234.apple-4');
      const forged = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'victim', email: 'victim@example.test', email_verified: true })).toString('base64url')}.`;
      const back = landing(await postForm(t, action, { ...fields, id_token: forged }));
      const signedIn = json(await ssoVerify(t, env(), back.token!));
      expect(signedIn.user.email).not.toBe('victim@example.test');
    });

    it('a form post with a field that is not a string is a 400, never a 500', async () => {
      const answer = await t.call({ method: 'POST', url: `/v1/sso/oidc/${connection.id}/callback`, payload: { state: ['a', 'b'] } });
      expect(answer.statusCode).toBe(400);
      expect(json(answer).error.code).toBe('invalid_request');
    });
  });

  it('self-managed GitLab: its emails link accounts only when the operator sets trustEmailVerified (refused on gitlab.com)', async () => {
    const onDefault = await createConnection(t, env(), { type: 'oidc', preset: 'gitlab', name: 'GitLab.com', domains: [], clientId: 'c', clientSecret: 's', trustEmailVerified: true });
    expect(onDefault.statusCode).toBe(400);
    expect(json(onDefault).error.details.fields).toEqual(['trustEmailVerified']);
    const selfManaged = await startOidcIdp();
    try {
      const existing = await signUp(t);
      const attempt = async (trust: boolean | undefined, subject: string) => {
        const created = await createConnection(t, env(), {
          type: 'oidc', preset: 'gitlab', name: `Our GitLab ${subject}`, domains: [], issuer: selfManaged.issuer, clientId: 'sm-client', clientSecret: 'sm-secret',
          ...(trust === undefined ? {} : { trustEmailVerified: trust }),
        });
        expect(created.statusCode, created.body).toBe(201);
        const connection = json(created);
        expect(connection.trustEmailVerified).toBe(trust ?? false);
        selfManaged.setClient({ clientId: 'sm-client', clientSecret: 'sm-secret', redirectUri: connection.redirectUri });
        // Whoever administers that GitLab can mark any address verified: here, an existing user's.
        selfManaged.accounts.set(subject, { email: existing.email, email_verified: true });
        const answer = await new TestBrowser(t).signIn(json(await ssoStart(t, env(), { connectionId: connection.id })).url, subject);
        return new URL(answer.location!).searchParams;
      };
      const unvouched = await attempt(undefined, 'sm-1');
      expect(unvouched.get('token')).toBeNull();
      expect(unvouched.get('error')).toBe('account_exists');
      const vouched = await attempt(true, 'sm-2');
      expect(json(await ssoVerify(t, env(), vouched.get('token')!)).user.id).toBe(existing.userId);
    } finally {
      await selfManaged.close();
    }
  });

  for (const preset of ['gitlab', 'linkedin'] as const) {
    it(`${preset}: an ID token with email_verified links the existing account; unverified creates nobody`, async () => {
      const created = await createConnection(t, env(), { type: 'oidc', preset, name: preset, domains: [], clientId: `${preset}-client`, clientSecret: `${preset}-secret` });
      expect(created.statusCode, created.body).toBe(201);
      const connection = json(created);
      expect(connection).toMatchObject({ preset, issuer: idp.issuer, scopes: ['openid', 'email', 'profile'] });
      idp.setClient({ clientId: `${preset}-client`, clientSecret: `${preset}-secret`, redirectUri: connection.redirectUri });
      const existing = await signUp(t);
      idp.accounts.set(`${preset}-1`, { email: existing.email, email_verified: true, given_name: 'Linus' });
      const answer = await new TestBrowser(t).signIn(json(await ssoStart(t, env(), { connectionId: connection.id })).url, `${preset}-1`);
      expect(json(await ssoVerify(t, env(), landing({ statusCode: answer.status, headers: { location: answer.location } } as never).token!)).user.id).toBe(existing.userId);
      idp.accounts.set(`${preset}-2`, { email: uniqueEmail(preset), email_verified: false });
      const refused = await new TestBrowser(t).signIn(json(await ssoStart(t, env(), { connectionId: connection.id })).url, `${preset}-2`);
      expect(new URL(refused.location!).searchParams.get('error')).toBe('email_not_verified');
    });
  }
});
