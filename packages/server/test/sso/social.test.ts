import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { startOAuth2Server } from '../helpers/oauth2-server.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { plainSignIn } from '../helpers/social.js';
import { createConnection, enableSso, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

/**
 * Social connections (domains: []): the generic OAuth 2.0 form and the Discord preset against a
 * plain OAuth 2.0 server started here, and a generic OIDC social connection against the real
 * oidc-provider; the linking rule of DESIGN "Linking by email on social connections".
 */
describe(`Social connections (${testDb()})`, () => {
  let t: TestApp;
  let basic: Awaited<ReturnType<typeof startOAuth2Server>>;
  let post: Awaited<ReturnType<typeof startOAuth2Server>>;
  let discord: Awaited<ReturnType<typeof startOAuth2Server>>;
  let idp: TestOidcIdp;
  const env = () => t.project.development;
  const user = (id: string) => t.call({ method: 'GET', url: `/v1/users/${id}`, credential: env().secretKey });

  beforeAll(async () => {
    basic = await startOAuth2Server({ clientId: 'acme-client', clientSecret: 'acme-secret', authMethod: 'client_secret_basic' });
    post = await startOAuth2Server({ clientId: 'post-client', clientSecret: 'post-secret', authMethod: 'client_secret_post' });
    discord = await startOAuth2Server({ clientId: 'discord-client', clientSecret: 'discord-secret', authMethod: 'client_secret_post' });
    idp = await startOidcIdp();
    t = await startTestApp({ sso: { presetIssuers: { discord: discord.base } } });
    await enableSso(t, env());
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([basic.close(), post.close(), discord.close(), idp.close()]);
  });

  const oauth2 = (server: { base: string }, extra: Record<string, unknown> = {}) => ({
    type: 'oauth2',
    name: 'Acme ID',
    domains: [],
    authorizationUrl: `${server.base}/authorize`,
    tokenUrl: `${server.base}/token`,
    userinfoUrl: `${server.base}/userinfo`,
    clientId: 'acme-client',
    clientSecret: 'acme-secret',
    userinfoFields: { id: 'data.user.id', email: 'data.user.mail' },
    ...extra,
  });

  async function connect(body: Record<string, unknown>) {
    const created = await createConnection(t, env(), body);
    expect(created.statusCode, created.body).toBe(201);
    return json(created) as { id: string; redirectUri: string; [k: string]: unknown };
  }

  async function signInWith(connectionId: string) {
    const started = await ssoStart(t, env(), { connectionId });
    expect(started.statusCode, started.body).toBe(200);
    return plainSignIn(t, json(started).url);
  }

  it('generic OAuth 2.0: dot paths find the id and email; without an emailVerified field the email is never trusted (new user unverified, existing account_exists)', async () => {
    const connection = await connect(oauth2(basic));
    expect(connection).toMatchObject({ type: 'oauth2', domains: [], trustEmailVerified: false, tokenEndpointAuthMethod: 'client_secret_basic', redirectUri: `http://gatehouse.test/v1/sso/oidc/${connection.id}/callback` });
    expect(JSON.stringify(connection)).not.toContain('acme-secret');
    const url = new URL(json(await ssoStart(t, env(), { connectionId: connection.id })).url);
    expect(url.origin + url.pathname).toBe(`${basic.base}/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('nonce')).toBeNull();

    const email = uniqueEmail('acme');
    basic.signInAs({ data: { user: { id: 4242, mail: email } } });
    const first = await signInWith(connection.id);
    expect(first.error, first.description ?? '').toBeNull();
    const signedIn = json(await ssoVerify(t, env(), first.token!));
    expect(signedIn.user.email).toBe(email);
    expect(json(await user(signedIn.user.id)).emailVerified).toBe(false);
    // The numeric id is the subject: the same person again is the same user.
    basic.signInAs({ data: { user: { id: 4242, mail: uniqueEmail('renamed') } } });
    expect(json(await ssoVerify(t, env(), (await signInWith(connection.id)).token!)).user.id).toBe(signedIn.user.id);

    const victim = await signUp(t);
    basic.signInAs({ data: { user: { id: 777, mail: victim.email } } });
    const taken = await signInWith(connection.id);
    expect(taken.token).toBeNull();
    expect(taken.error).toBe('account_exists');
  });

  it('generic OAuth 2.0 with emailVerified and trustEmailVerified links an existing account by its verified email; client_secret_post', async () => {
    const connection = await connect(
      oauth2(post, { clientId: 'post-client', clientSecret: 'post-secret', tokenEndpointAuthMethod: 'client_secret_post', trustEmailVerified: true, userinfoFields: { id: 'sub', email: 'email', emailVerified: 'email_verified', firstName: 'profile.first' } }),
    );
    const existing = await signUp(t);
    post.signInAs({ sub: 'p-1', email: existing.email.toUpperCase(), email_verified: true, profile: { first: 'Ada' } });
    const linked = await signInWith(connection.id);
    expect(linked.error, linked.description ?? '').toBeNull();
    expect(json(await ssoVerify(t, env(), linked.token!)).user.id).toBe(existing.userId);
    expect(json(await user(existing.userId)).emailVerified).toBe(true);
    // The provider says unverified: nobody is created with that address.
    post.signInAs({ sub: 'p-2', email: uniqueEmail('unverified'), email_verified: false });
    expect((await signInWith(connection.id)).error).toBe('email_not_verified');
  });

  it('generic OAuth 2.0 with emailVerified but without trustEmailVerified links nobody by email', async () => {
    const connection = await connect(oauth2(basic, { name: 'Untrusted', userinfoFields: { id: 'id', email: 'email', emailVerified: 'verified' } }));
    const existing = await signUp(t);
    basic.signInAs({ id: 'u-1', email: existing.email, verified: true });
    expect((await signInWith(connection.id)).error).toBe('account_exists');
  });

  it('discord: the documented /users/@me shape (id as a string, verified, global_name) links an existing account by its verified email', async () => {
    const connection = await connect({ type: 'oidc', preset: 'discord', name: 'Discord', domains: [], clientId: 'discord-client', clientSecret: 'discord-secret' });
    expect(connection).toMatchObject({ preset: 'discord', scopes: ['identify', 'email'] });
    const url = new URL(json(await ssoStart(t, env(), { connectionId: connection.id })).url);
    expect(url.pathname).toBe('/oauth2/authorize');
    expect(url.searchParams.get('scope')).toBe('identify email');
    const existing = await signUp(t);
    discord.signInAs({ id: '80351110224678912', username: 'nelly', discriminator: '0', global_name: 'Nelly', avatar: '8342729096ea3675442027381ff50dfe', verified: true, email: existing.email, flags: 64, banner: null, accent_color: 16711680, premium_type: 1, public_flags: 64, mfa_enabled: true, locale: 'en-US' });
    const linked = await signInWith(connection.id);
    expect(linked.error, linked.description ?? '').toBeNull();
    expect(json(await ssoVerify(t, env(), linked.token!)).user.id).toBe(existing.userId);
    // An unverified Discord email creates nobody.
    discord.signInAs({ id: '1', username: 'x', global_name: null, verified: false, email: uniqueEmail('discord-unverified') });
    expect((await signInWith(connection.id)).error).toBe('email_not_verified');
    const fresh = uniqueEmail('discord-new');
    discord.signInAs({ id: '2', username: 'nova', global_name: 'Nova', verified: true, email: fresh });
    const created = json(await ssoVerify(t, env(), (await signInWith(connection.id)).token!));
    expect(json(await user(created.user.id))).toMatchObject({ email: fresh, emailVerified: true, firstName: 'Nova' });
  });

  it('a person who refuses at the provider comes back with error=access_denied', async () => {
    const connection = await connect(oauth2(basic, { name: 'Refused' }));
    basic.signInAs(null);
    expect((await signInWith(connection.id)).error).toBe('access_denied');
  });

  it('a social connection is never chosen by email routing; GET /v1/environment names its provider', async () => {
    const connection = await connect({ type: 'oidc', preset: 'discord', name: 'Discord 2', domains: [], clientId: 'discord-client', clientSecret: 'discord-secret' });
    const routed = await ssoStart(t, env(), { email: 'someone@discord.com' });
    expect(routed.statusCode).toBe(422);
    expect(json(routed).error.code).toBe('sso_not_configured');
    const listed = json(await t.call({ method: 'GET', url: '/v1/environment', credential: env().publishableKey })).ssoConnections;
    expect(listed).toContainEqual({ id: connection.id, name: 'Discord 2', type: 'oidc', domains: [], provider: 'discord' });
    expect(listed.find((c: { type: string }) => c.type === 'oauth2')).toMatchObject({ provider: 'oauth2' });
  });

  describe('generic OIDC social connection (real oidc-provider)', () => {
    let plain: { id: string; redirectUri: string };
    let trusted: { id: string; redirectUri: string };

    beforeAll(async () => {
      plain = await connect({ type: 'oidc', name: 'Plain OIDC', domains: [], issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'oidc-secret' });
      expect(plain).toMatchObject({ trustEmailVerified: false });
      trusted = await connect({ type: 'oidc', name: 'Trusted OIDC', domains: [], issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'oidc-secret', trustEmailVerified: true });
    });

    async function through(connection: { id: string; redirectUri: string }, login: string) {
      idp.setClient({ clientId: 'gatehouse', clientSecret: 'oidc-secret', redirectUri: connection.redirectUri });
      const started = json(await ssoStart(t, env(), { connectionId: connection.id })).url;
      const answer = await new TestBrowser(t).signIn(started, login);
      expect(answer.status, answer.body).toBe(303);
      const landed = new URL(answer.location!);
      return { token: landed.searchParams.get('token'), error: landed.searchParams.get('error') };
    }

    it('without trustEmailVerified: a verified email links no existing account, and a new user starts unverified', async () => {
      const existing = await signUp(t);
      idp.accounts.set('plain-1', { email: existing.email, email_verified: true });
      expect((await through(plain, 'plain-1')).error).toBe('account_exists');
      const email = uniqueEmail('plain-new');
      idp.accounts.set('plain-2', { email, email_verified: true });
      const created = json(await ssoVerify(t, env(), (await through(plain, 'plain-2')).token!));
      expect(json(await user(created.user.id)).emailVerified).toBe(false);
    });

    it('with trustEmailVerified: a verified email links the existing account', async () => {
      const existing = await signUp(t);
      idp.accounts.set('trusted-1', { email: existing.email, email_verified: true });
      const linked = await through(trusted, 'trusted-1');
      expect(linked.error).toBeNull();
      expect(json(await ssoVerify(t, env(), linked.token!)).user.id).toBe(existing.userId);
    });
  });

  it('bad connection configs are 400s naming the field, never 500s', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...oauth2(basic), userinfoFields: undefined }, 'userinfoFields'],
      [{ ...oauth2(basic), userinfoFields: { id: 'id' } }, 'userinfoFields'],
      [{ ...oauth2(basic), userinfoFields: { id: 'a..b', email: 'email' } }, 'userinfoFields'],
      [{ ...oauth2(basic), userinfoFields: { id: 'id', email: 'email', extra: 'x' } }, 'userinfoFields.extra'],
      [{ ...oauth2(basic), tokenUrl: 'not a url' }, 'tokenUrl'],
      [{ ...oauth2(basic), authorizationUrl: undefined }, 'authorizationUrl'],
      [{ ...oauth2(basic), clientSecret: undefined }, 'clientSecret'],
      [{ ...oauth2(basic), preset: 'discord' }, 'preset'],
      [{ type: 'oidc', preset: 'discord', name: 'D', domains: [], clientId: 'c', clientSecret: 's', trustEmailVerified: true }, 'trustEmailVerified'],
      [{ type: 'oidc', preset: 'apple', name: 'Apple', domains: [], clientId: 'com.example.web', teamId: 'bad', keyId: 'ABCDEFGHIJ', privateKey: 'x' }, 'teamId'],
      [{ type: 'oidc', preset: 'apple', name: 'Apple', domains: [], clientId: 'com.example.web', teamId: 'ABCDEFGHIJ', keyId: 'ABCDEFGHIJ', privateKey: 'not a key' }, 'privateKey'],
      [{ type: 'oidc', preset: 'myspace', name: 'M', domains: [], clientId: 'c', clientSecret: 's' }, 'preset'],
    ];
    for (const [body, field] of cases) {
      const answer = await createConnection(t, env(), body);
      expect(answer.statusCode, `${field}: ${answer.body}`).toBe(400);
      expect(json(answer).error.code).toBe('invalid_request');
      expect(JSON.stringify(json(answer).error.details.fields), field).toContain(field.split('.')[0]);
    }
    const production = await createConnection(t, t.project.production, oauth2(basic));
    expect(production.statusCode).toBe(400);
  });

  it('PATCH changes an OAuth 2.0 connection and keeps its secret', async () => {
    const connection = await connect(oauth2(basic, { name: 'To patch' }));
    const patched = await t.call({
      method: 'PATCH',
      url: `/v1/platform/environments/${env().id}/sso-connections/${connection.id}`,
      credential: t.platformKey,
      payload: { userinfoFields: { id: 'uid', email: 'mail' }, scopes: ['profile'] },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(json(patched)).toMatchObject({ userinfoFields: { id: 'uid', email: 'mail' }, scopes: ['profile'] });
    const email = uniqueEmail('patched');
    basic.signInAs({ uid: 'x-9', mail: email });
    const answer = await signInWith(connection.id);
    expect(answer.error, answer.description ?? '').toBeNull();
  });
});
