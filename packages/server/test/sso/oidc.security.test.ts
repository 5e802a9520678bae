import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { createConnection, enableSso, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

describe(`OIDC single sign-on attacks (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestOidcIdp;
  let connection: { id: string; redirectUri: string };

  beforeAll(async () => {
    t = await startTestApp();
    idp = await startOidcIdp();
    await enableSso(t, t.project.development);
    connection = json(
      await createConnection(t, t.project.development, { type: 'oidc', name: 'Corp', domains: ['corp.test'], issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'secret-1' }),
    );
    idp.setClient({ clientId: 'gatehouse', clientSecret: 'secret-1', redirectUri: connection.redirectUri });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  const account = (tag: string, claims: { email_verified?: boolean; domain?: string } = {}) => {
    const id = `acct-${tag}-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail(tag).replace(/@.*/, `@${claims.domain ?? 'corp.test'}`);
    idp.accounts.set(id, { email, email_verified: claims.email_verified ?? true });
    return { id, email };
  };
  const startUrl = async () => json(await ssoStart(t, t.project.development, { connectionId: connection.id })).url as string;
  const path = (url: string) => url.slice('http://gatehouse.test'.length);
  const errorOf = (location: string | null) => new URL(location!).searchParams.get('error');

  it('state replay: a callback URL used twice answers 400 invalid_request the second time', async () => {
    const person = account('replay');
    const browser = new TestBrowser(t);
    const first = await browser.signIn(await startUrl(), person.id);
    expect(new URL(first.location!).searchParams.get('token')).toBeTruthy();
    const again = await t.call({ method: 'GET', url: path(first.callbackUrl) });
    expect(again.statusCode).toBe(400);
    expect(json(again).error.code).toBe('invalid_request');
  });

  it('a replayed code under a fresh state is refused by the IdP (PKCE binds it to its start)', async () => {
    const person = account('code');
    const browser = new TestBrowser(t);
    const first = await browser.signIn(await startUrl(), person.id);
    const code = new URL(first.callbackUrl).searchParams.get('code')!;
    const fresh = new URL(await startUrl()).searchParams.get('state')!;
    const replay = await t.call({ method: 'GET', url: `${new URL(connection.redirectUri).pathname}?code=${encodeURIComponent(code)}&state=${encodeURIComponent(fresh)}&iss=${encodeURIComponent(idp.issuer)}` });
    expect(replay.statusCode).toBe(303);
    expect(new URL(String(replay.headers.location)).searchParams.get('token')).toBeNull();
    expect(errorOf(String(replay.headers.location))).toBe('invalid_response');
  });

  it('a database reader learns no PKCE verifier: what is stored does not hash to the code_challenge sent', async () => {
    const url = new URL(await startUrl());
    const rows = await t.store.db
      .selectFrom('sso_attempts')
      .select(['code_verifier', 'nonce'])
      .where('environment_id', '=', t.project.development.id)
      .where('nonce', '=', url.searchParams.get('nonce')!)
      .execute();
    expect(rows).toHaveLength(1);
    const stored = rows[0]!.code_verifier!;
    expect(createHash('sha256').update(stored).digest('base64url')).not.toBe(url.searchParams.get('code_challenge'));
    expect(stored.length).toBeGreaterThan(43);
  });

  it("the IdP's refusal (error=access_denied) goes back to redirectUrl and spends the state", async () => {
    const state = new URL(await startUrl()).searchParams.get('state')!;
    const callback = `${new URL(connection.redirectUri).pathname}?error=access_denied&error_description=${encodeURIComponent('The user said no')}&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(idp.issuer)}`;
    const refused = await t.call({ method: 'GET', url: callback });
    expect(refused.statusCode).toBe(303);
    expect(errorOf(String(refused.headers.location))).toBe('access_denied');
    expect((await t.call({ method: 'GET', url: callback })).statusCode).toBe(400);
  });

  it('a tampered state answers 400 invalid_request, with no redirect', async () => {
    const person = account('tamper');
    const callbackUrl = await new TestBrowser(t).codeFor(await startUrl(), person.id);
    const url = new URL(callbackUrl);
    url.searchParams.set('state', `${url.searchParams.get('state')!.slice(0, -2)}zz`);
    const response = await t.call({ method: 'GET', url: path(url.href) });
    expect(response.statusCode).toBe(400);
    expect(json(response).error.code).toBe('invalid_request');
    expect(response.headers.location).toBeUndefined();
  });

  it('a nonce other than the one bound to the start is refused', async () => {
    const person = account('nonce');
    const url = new URL(await startUrl());
    url.searchParams.set('nonce', 'attacker-chosen-nonce');
    const answer = await new TestBrowser(t).signIn(url.href, person.id);
    expect(answer.status).toBe(303);
    expect(errorOf(answer.location)).toBe('invalid_response');
  });

  it('an ID token signed by another key than the published one is refused', async () => {
    const person = account('foreign-key');
    await idp.signWithForeignKey(true);
    idp.setClient({ clientId: 'gatehouse', clientSecret: 'secret-1', redirectUri: connection.redirectUri });
    try {
      const answer = await new TestBrowser(t).signIn(await startUrl(), person.id);
      expect(errorOf(answer.location)).toBe('invalid_response');
    } finally {
      await idp.signWithForeignKey(false);
      idp.setClient({ clientId: 'gatehouse', clientSecret: 'secret-1', redirectUri: connection.redirectUri });
    }
  });

  it('account enumeration: an unverified email answers alike whether or not an account has it, links nothing and creates none', async () => {
    const person = account('unverified', { email_verified: false });
    await signUp(t, { email: person.email });
    const answer = await new TestBrowser(t).signIn(await startUrl(), person.id);
    expect(new URL(answer.location!).searchParams.get('token')).toBeNull();
    const fresh = account('unverified-new', { email_verified: false });
    const created = await new TestBrowser(t).signIn(await startUrl(), fresh.id);
    const both = [answer, created].map((a) => {
      const url = new URL(a.location!);
      return { error: url.searchParams.get('error'), description: url.searchParams.get('error_description') };
    });
    expect(both[0]).toEqual(both[1]);
    expect(both[0]!.error).toBe('email_not_verified');
    const users = await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(fresh.email)}`, credential: t.project.development.secretKey });
    expect(json(users).data).toEqual([]);
  });

  it('account enumeration: an email outside the connection domains answers alike whether or not an account has it', async () => {
    const person = account('outside', { domain: 'partner.test' });
    await signUp(t, { email: person.email });
    const answer = await new TestBrowser(t).signIn(await startUrl(), person.id);
    const stranger = account('outside-new', { domain: 'partner.test' });
    const fresh = await new TestBrowser(t).signIn(await startUrl(), stranger.id);
    const read = (a: { location: string | null }) => {
      const url = new URL(a.location!);
      return { error: url.searchParams.get('error'), description: url.searchParams.get('error_description'), token: url.searchParams.get('token') };
    };
    expect(read(answer)).toEqual(read(fresh));
    expect(read(answer)).toMatchObject({ error: 'email_not_verified', token: null });
  });

  it('account squatting across an unvouched domain: a verified email outside the connection domains creates no account and proves nothing', async () => {
    // The IdP's administrator gives a user someone else's address at another domain, "verified".
    const squatter = account('squat', { domain: 'victim-mail.test' });
    const answer = await new TestBrowser(t).signIn(await startUrl(), squatter.id);
    expect(new URL(answer.location!).searchParams.get('token')).toBeNull();
    expect(errorOf(answer.location)).toBe('email_not_verified');
    const users = await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(squatter.email)}`, credential: t.project.development.secretKey });
    expect(json(users).data).toEqual([]);
  });

  it('an IdP that is down at the callback sends the browser back with error=idp_unavailable', async () => {
    const person = account('down');
    const callbackUrl = await new TestBrowser(t).codeFor(await startUrl(), person.id);
    idp.down();
    try {
      const response = await t.call({ method: 'GET', url: path(callbackUrl) });
      expect(response.statusCode).toBe(303);
      expect(errorOf(String(response.headers.location))).toBe('idp_unavailable');
    } finally {
      idp.up();
    }
  });

  it('the handoff token is single-use and bound to its environment', async () => {
    const person = account('handoff');
    const answer = await new TestBrowser(t).signIn(await startUrl(), person.id);
    const token = new URL(answer.location!).searchParams.get('token')!;
    const other = await t.createProject('Other');
    await enableSso(t, other.development);
    expect((await ssoVerify(t, other.development, token)).statusCode).toBe(401);
    expect((await ssoVerify(t, t.project.development, token)).statusCode).toBe(200);
    expect((await ssoVerify(t, t.project.development, token)).statusCode).toBe(401);
  });

  it('a banned user who signs in with SSO gets no session (403 user_banned at verify)', async () => {
    const person = account('banned');
    const first = await new TestBrowser(t).signIn(await startUrl(), person.id);
    const userId = json(await ssoVerify(t, t.project.development, new URL(first.location!).searchParams.get('token')!)).user.id;
    const ban = await t.call({ method: 'POST', url: `/v1/users/${userId}/ban`, credential: t.project.development.secretKey });
    expect(ban.statusCode, ban.body).toBe(200);
    const again = await new TestBrowser(t).signIn(await startUrl(), person.id);
    const refused = await ssoVerify(t, t.project.development, new URL(again.location!).searchParams.get('token')!);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('user_banned');
  });
});
