import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startGithubStandin } from '../helpers/github-standin.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { startMicrosoftStandin } from '../helpers/microsoft-standin.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { createConnection, enableSso, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

/**
 * The presets' own code paths, with the providers' claim shapes: Google against the real
 * oidc-provider standing at Google's place, GitHub (no ID token; profile and emails from its API)
 * against a stand-in with GitHub's shapes and checks, Microsoft against a stand-in answering at its
 * real address (so openid-client's `{tenantid}` issuer handling runs) with Entra ID's claim shape.
 */
describe(`SSO presets (${testDb()})`, () => {
  let t: TestApp;
  let google: TestOidcIdp;
  let github: Awaited<ReturnType<typeof startGithubStandin>>;
  let microsoft: Awaited<ReturnType<typeof startMicrosoftStandin>>;

  beforeAll(async () => {
    google = await startOidcIdp();
    github = await startGithubStandin({ clientId: 'gh-client', clientSecret: 'gh-secret' });
    microsoft = await startMicrosoftStandin({ clientId: 'ms-client', clientSecret: 'ms-secret' });
    t = await startTestApp({ sso: { presetIssuers: { google: google.issuer, github: github.base }, fetch: microsoft.fetch } });
    await enableSso(t, t.project.development);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await google.close();
    await github.close();
  });

  async function finish(browser: TestBrowser, url: string, login = '') {
    const answer = login ? await browser.signIn(url, login) : await (async () => {
      const first = await browser.request(url);
      return browser.request(first.location!);
    })();
    expect(answer.status, answer.body).toBe(303);
    return new URL(answer.location!);
  }

  it('google: a Google-shaped ID token (sub, email, email_verified, names) signs up and in', async () => {
    const created = await createConnection(t, t.project.development, { type: 'oidc', preset: 'google', name: 'Google', domains: ['gmail.test'], clientId: 'g-client', clientSecret: 'g-secret' });
    expect(created.statusCode, created.body).toBe(201);
    const connection = json(created);
    expect(connection).toMatchObject({ preset: 'google', issuer: google.issuer, scopes: ['openid', 'email', 'profile'] });
    google.setClient({ clientId: 'g-client', clientSecret: 'g-secret', redirectUri: connection.redirectUri });
    const email = uniqueEmail('google').replace(/@.*/, '@gmail.test');
    google.accounts.set('1077123456789', { email, email_verified: true, given_name: 'Grace', family_name: 'Hopper' });
    const url = json(await ssoStart(t, t.project.development, { email })).url;
    const landed = await finish(new TestBrowser(t), url, '1077123456789');
    const signedIn = json(await ssoVerify(t, t.project.development, landed.searchParams.get('token')!));
    expect(signedIn.user.email).toBe(email);
  });

  it('github: the primary verified email from the API signs up; the numeric id keeps the identity', async () => {
    const created = await createConnection(t, t.project.development, { type: 'oidc', preset: 'github', name: 'GitHub', domains: [], clientId: 'gh-client', clientSecret: 'gh-secret' });
    expect(created.statusCode, created.body).toBe(201);
    const connection = json(created);
    expect(connection.scopes).toEqual(['read:user', 'user:email']);
    const email = uniqueEmail('octo');
    github.signInAs({ id: 583231, name: 'Mona Lisa', emails: [{ email: 'old@unverified.test', primary: false, verified: false }, { email, primary: true, verified: true }] });
    const start = async () => {
      const started = await ssoStart(t, t.project.development, { connectionId: connection.id });
      const url = new URL(json(started).url);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('nonce')).toBeNull();
      return url.href;
    };
    const landed = await finish(new TestBrowser(t), await start());
    expect(landed.searchParams.get('error'), landed.searchParams.get('error_description') ?? '').toBeNull();
    const first = json(await ssoVerify(t, t.project.development, landed.searchParams.get('token')!));
    expect(first.user.email).toBe(email);
    // Same GitHub id with another primary email: still the same user.
    github.signInAs({ id: 583231, name: 'Mona Lisa', emails: [{ email: uniqueEmail('octo-new'), primary: true, verified: true }] });
    const again = await finish(new TestBrowser(t), await start());
    expect(json(await ssoVerify(t, t.project.development, again.searchParams.get('token')!)).user.id).toBe(first.user.id);
  });

  it('github: an account whose emails are all unverified creates nobody (error=email_not_verified)', async () => {
    const connection = json(await t.call({ method: 'GET', url: `/v1/platform/environments/${t.project.development.id}/sso-connections`, credential: t.platformKey })).data.find(
      (c: { preset?: string }) => c.preset === 'github',
    );
    github.signInAs({ id: 99, name: 'Eve', emails: [{ email: uniqueEmail('eve'), primary: true, verified: false }] });
    const url = json(await ssoStart(t, t.project.development, { connectionId: connection.id })).url;
    const landed = await finish(new TestBrowser(t), url);
    expect(landed.searchParams.get('error')).toBe('email_not_verified');
  });

  it('github: a connection without domains is a social connection, and links an existing account by a GitHub-verified email (DESIGN: linking by email on social connections)', async () => {
    const connection = json(await t.call({ method: 'GET', url: `/v1/platform/environments/${t.project.development.id}/sso-connections`, credential: t.platformKey })).data.find(
      (c: { preset?: string }) => c.preset === 'github',
    );
    const email = uniqueEmail('octo-existing');
    const existing = await signUp(t, { email });
    github.signInAs({ id: 4242, name: 'Oct O', emails: [{ email, primary: true, verified: true }] });
    const landed = await finish(new TestBrowser(t), json(await ssoStart(t, t.project.development, { connectionId: connection.id })).url);
    expect(landed.searchParams.get('error')).toBeNull();
    const token = landed.searchParams.get('token');
    expect(token).not.toBeNull();
    const verified = await t.call({ method: 'POST', url: '/v1/auth/sso/verify', credential: t.project.development.publishableKey, payload: { token } });
    expect(verified.statusCode, verified.body).toBe(200);
    expect(json(verified).user.id).toBe(existing.userId);
  });

  describe('microsoft (Entra ID claim shape)', () => {
    const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    let connection: { id: string; redirectUri: string };
    const microsoftEmail = (tag: string) => uniqueEmail(tag).replace(/@.*/, '@contoso.test');

    beforeAll(async () => {
      const created = await createConnection(t, t.project.development, { type: 'oidc', preset: 'microsoft', name: 'Microsoft', domains: ['contoso.test'], clientId: 'ms-client', clientSecret: 'ms-secret' });
      expect(created.statusCode, created.body).toBe(201);
      connection = json(created);
    });

    /** Start, the IdP's authorize step, then Gatehouse's callback: where the browser lands. */
    async function signIn(account: Parameters<typeof microsoft.signInAs>[0]) {
      microsoft.signInAs(account);
      const url = json(await ssoStart(t, t.project.development, { connectionId: connection.id })).url as string;
      expect(url.startsWith('https://login.microsoftonline.com/common/oauth2/v2.0/authorize?')).toBe(true);
      const answer = await new TestBrowser(t).request(microsoft.authorize(url));
      expect(answer.status, answer.body).toBe(303);
      const landed = new URL(answer.location!);
      return { token: landed.searchParams.get('token'), error: landed.searchParams.get('error'), description: landed.searchParams.get('error_description') };
    }

    it('the common endpoint: a token whose issuer is its own tenant (from tid) with email and xms_edov signs up; the second sign-in is the same user', async () => {
      expect(connection).toMatchObject({ preset: 'microsoft', issuer: 'https://login.microsoftonline.com/common/v2.0' });
      const email = microsoftEmail('entra');
      const account = { sub: `pairwise-${Math.random().toString(36).slice(2)}`, tid: TENANT, preferred_username: email, name: 'Ada Lovelace', email, xms_edov: true };
      const first = await signIn(account);
      expect(first.error, first.description ?? '').toBeNull();
      const signedIn = json(await ssoVerify(t, t.project.development, first.token!));
      expect(signedIn.user.email).toBe(email);
      expect(json(await t.call({ method: 'GET', url: `/v1/users/${signedIn.user.id}`, credential: t.project.development.secretKey })).emailVerified).toBe(true);
      // The subject keys the identity: a changed preferred_username is still the same user.
      const again = await signIn({ ...account, preferred_username: 'renamed@contoso.test' });
      expect(json(await ssoVerify(t, t.project.development, again.token!)).user.id).toBe(signedIn.user.id);
    });

    it('preferred_username is never taken as the email (Entra does not verify it): no email claim is error=email_missing', async () => {
      const answer = await signIn({ sub: `pairwise-${Math.random().toString(36).slice(2)}`, tid: TENANT, preferred_username: microsoftEmail('upn') });
      expect(answer.token).toBeNull();
      expect(answer.error).toBe('email_missing');
    });

    it('nOAuth: an email claim without xms_edov (any tenant admin can set it) neither links to the existing account nor creates one', async () => {
      const victim = microsoftEmail('noauth-victim');
      const existing = await signUp(t, { email: victim });
      const linked = await signIn({ sub: `attacker-${Math.random().toString(36).slice(2)}`, tid: 'f00dbabe-0000-4000-8000-000000000001', preferred_username: 'mallory@evil.test', email: victim });
      expect(linked.token).toBeNull();
      expect(linked.error).toBe('email_not_verified');
      const created = await signIn({ sub: `attacker-${Math.random().toString(36).slice(2)}`, tid: 'f00dbabe-0000-4000-8000-000000000001', preferred_username: 'mallory@evil.test', email: microsoftEmail('noauth-new') });
      expect(created.error).toBe('email_not_verified');
      expect(existing.userId).toBeTruthy();
    });

    it('a token whose issuer names another tenant than its tid is refused (error=invalid_response)', async () => {
      const email = microsoftEmail('wrong-tenant');
      const answer = await signIn({ sub: `pairwise-${Math.random().toString(36).slice(2)}`, tid: TENANT, issuerTenant: 'f00dbabe-0000-4000-8000-000000000002', preferred_username: email, email, xms_edov: true });
      expect(answer.token).toBeNull();
      expect(answer.error).toBe('invalid_response');
    });
  });
});
