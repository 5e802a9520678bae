import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startGithubStandin } from '../helpers/github-standin.js';
import { json, uniqueEmail } from '../helpers/identity.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { createConnection, enableSso, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

/**
 * The presets' own code paths, with the providers' claim shapes: Google against the real
 * oidc-provider standing at Google's place, GitHub (no ID token; profile and emails from its API)
 * against a stand-in with GitHub's shapes and checks.
 */
describe(`SSO presets (${testDb()})`, () => {
  let t: TestApp;
  let google: TestOidcIdp;
  let github: Awaited<ReturnType<typeof startGithubStandin>>;

  beforeAll(async () => {
    google = await startOidcIdp();
    github = await startGithubStandin({ clientId: 'gh-client', clientSecret: 'gh-secret' });
    t = await startTestApp({ sso: { presetIssuers: { google: google.issuer, github: github.base } } });
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
});
