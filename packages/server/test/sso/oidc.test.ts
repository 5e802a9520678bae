import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { createConnection, enableSso, REDIRECT_URL, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

describe(`OIDC single sign-on against a real OpenID Provider (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestOidcIdp;
  let connection: { id: string; redirectUri: string };

  beforeAll(async () => {
    t = await startTestApp();
    idp = await startOidcIdp();
    await enableSso(t, t.project.development);
    const created = await createConnection(t, t.project.development, {
      type: 'oidc',
      name: 'Corp OIDC',
      domains: ['corp.test'],
      issuer: idp.issuer,
      clientId: 'gatehouse',
      clientSecret: 'a-client-secret',
    });
    expect(created.statusCode, created.body).toBe(201);
    connection = json(created);
    idp.setClient({ clientId: 'gatehouse', clientSecret: 'a-client-secret', redirectUri: connection.redirectUri });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  const account = (tag: string, claims: { email_verified?: boolean; domain?: string } = {}) => {
    const id = `acct-${tag}-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail(tag).replace(/@.*/, `@${claims.domain ?? 'corp.test'}`);
    idp.accounts.set(id, { email, email_verified: claims.email_verified ?? true, given_name: 'Ada', family_name: 'Lovelace' });
    return { id, email };
  };

  async function startUrl(body: Record<string, unknown> = { connectionId: connection.id }) {
    const started = await ssoStart(t, t.project.development, body);
    expect(started.statusCode, started.body).toBe(200);
    return json(started).url as string;
  }

  async function signInThrough(login: string, url?: string) {
    const browser = new TestBrowser(t);
    const answer = await browser.signIn(url ?? (await startUrl()), login);
    expect(answer.status, answer.body).toBe(303);
    const landed = new URL(answer.location!);
    return { landed, token: landed.searchParams.get('token'), error: landed.searchParams.get('error'), callbackUrl: answer.callbackUrl, browser };
  }

  it('the connection answers its redirect URI and never the client secret; the secret is stored sealed', async () => {
    expect(connection).toMatchObject({ type: 'oidc', issuer: idp.issuer, clientId: 'gatehouse', scopes: ['openid', 'email', 'profile'] });
    expect(connection.redirectUri).toBe(`http://gatehouse.test/v1/sso/oidc/${connection.id}/callback`);
    expect(JSON.stringify(connection)).not.toContain('a-client-secret');
    const row = await t.store.db.selectFrom('sso_connections').select('client_secret').where('environment_id', '=', t.project.development.id).where('id', '=', connection.id).executeTakeFirstOrThrow();
    expect(row.client_secret).not.toContain('a-client-secret');
  });

  it('the authorization URL carries PKCE S256, state and nonce in its query', async () => {
    const url = new URL(await startUrl());
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toBeTruthy();
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('redirect_uri')).toBe(connection.redirectUri);
  });

  it('signs a new user up through the whole browser path; the second sign-in is the same user', async () => {
    const person = account('new');
    const first = await signInThrough(person.id, await startUrl({ email: person.email }));
    expect(first.error).toBeNull();
    expect(first.landed.origin + first.landed.pathname).toBe(REDIRECT_URL);
    const signedIn = await ssoVerify(t, t.project.development, first.token!);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const { user, session } = json(signedIn);
    expect(user.email).toBe(person.email);
    expect(session.accessToken).toBeTruthy();
    expect(json(await t.call({ method: 'GET', url: `/v1/users/${user.id}`, credential: t.project.development.secretKey }))).toMatchObject({ emailVerified: true, firstName: 'Ada', lastName: 'Lovelace' });
    const second = await signInThrough(person.id);
    expect(json(await ssoVerify(t, t.project.development, second.token!)).user.id).toBe(user.id);
  });

  it('links an existing user at a listed domain with a verified email', async () => {
    const person = account('link');
    const existing = await signUp(t, { email: person.email });
    const back = await signInThrough(person.id);
    expect(back.error).toBeNull();
    expect(json(await ssoVerify(t, t.project.development, back.token!)).user.id).toBe(existing.userId);
    // The IdP's verified email proves the address, as an emailed link would.
    const user = await t.call({ method: 'GET', url: `/v1/users/${existing.userId}`, credential: t.project.development.secretKey });
    expect(json(user).emailVerified).toBe(true);
  });

  it('a single-tenant Entra ID as a generic connection: xms_edov (no email_verified) proves the address', async () => {
    const id = `acct-entra-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('entra').replace(/@.*/, '@corp.test');
    idp.accounts.set(id, { email, xms_edov: true });
    const back = await signInThrough(id);
    expect(back.error).toBeNull();
    expect(json(await ssoVerify(t, t.project.development, back.token!)).user.email).toBe(email);
  });

  it('GET /v1/environment lists the connection', async () => {
    const env = json(await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.development.publishableKey }));
    expect(env.ssoConnections).toContainEqual({ id: connection.id, name: 'Corp OIDC', type: 'oidc', domains: ['corp.test'], provider: 'oidc' });
  });

  it('a bad issuer and an unreachable discovery document are clear 400s; production refuses http', async () => {
    const down = await createConnection(t, t.project.development, { type: 'oidc', name: 'X', domains: [], issuer: 'http://127.0.0.1:9/', clientId: 'c', clientSecret: 's' });
    expect(down.statusCode).toBe(400);
    expect(json(down).error.details.fields).toEqual(['issuer']);
    expect(json(down).error.message).toContain('discovery document');
    const notUrl = await createConnection(t, t.project.development, { type: 'oidc', name: 'X', domains: [], issuer: 'not a url', clientId: 'c', clientSecret: 's' });
    expect(notUrl.statusCode).toBe(400);
    const mismatch = await createConnection(t, t.project.development, { type: 'oidc', name: 'X', domains: [], issuer: `${idp.issuer}/other`, clientId: 'c', clientSecret: 's' });
    expect(mismatch.statusCode).toBe(400);
    const production = await createConnection(t, t.project.production, { type: 'oidc', name: 'X', domains: [], issuer: idp.issuer, clientId: 'c', clientSecret: 's' });
    expect(production.statusCode).toBe(400);
    expect(json(production).error.message).toContain('https');
    const privateAddress = await createConnection(t, t.project.production, { type: 'oidc', name: 'X', domains: [], issuer: 'https://10.0.0.5/', clientId: 'c', clientSecret: 's' });
    expect(privateAddress.statusCode).toBe(400);
    expect(json(privateAddress).error.message).toContain('public host');
  });
});
