import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { startOAuth2Server } from '../helpers/oauth2-server.js';
import { plainSignIn } from '../helpers/social.js';
import { createConnection, enableSso, REDIRECT_URL, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

/** GET/POST/DELETE /v1/me/identities, the secret-key reads, and their webhook events. */
describe(`Linked identities (${testDb()})`, () => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startOAuth2Server>>;
  let untrusted: { id: string };
  let trusted: { id: string };
  const env = () => t.project.development;

  beforeAll(async () => {
    provider = await startOAuth2Server({ clientId: 'c', clientSecret: 's', authMethod: 'client_secret_basic' });
    t = await startTestApp();
    await enableSso(t, env());
    const base = { type: 'oauth2', domains: [], authorizationUrl: `${provider.base}/authorize`, tokenUrl: `${provider.base}/token`, userinfoUrl: `${provider.base}/userinfo`, clientId: 'c', clientSecret: 's' };
    untrusted = json(await createConnection(t, env(), { ...base, name: 'Acme', userinfoFields: { id: 'id', email: 'email' } }));
    trusted = json(await createConnection(t, env(), { ...base, name: 'Verified', userinfoFields: { id: 'id', email: 'email', emailVerified: 'verified' }, trustEmailVerified: true }));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  const list = (accessToken: string) => t.call({ method: 'GET', url: '/v1/me/identities', credential: accessToken });
  const unlink = (accessToken: string, id: string) => t.call({ method: 'DELETE', url: `/v1/me/identities/${id}`, credential: accessToken });
  async function link(accessToken: string, connectionId: string, as: unknown) {
    const started = await t.call({ method: 'POST', url: '/v1/me/identities', credential: accessToken, payload: { connectionId, redirectUrl: REDIRECT_URL } });
    expect(started.statusCode, started.body).toBe(200);
    provider.signInAs(as);
    return plainSignIn(t, json(started).url);
  }
  const complete = (accessToken: string, token: string) => t.call({ method: 'POST', url: '/v1/me/identities/complete', credential: accessToken, payload: { token } });
  /** Links through the provider and completes it with the same session: the new identity's id. */
  async function linked(accessToken: string, connectionId: string, as: unknown): Promise<string> {
    const back = await link(accessToken, connectionId, as);
    expect(back.error, back.description ?? '').toBeNull();
    const done = await complete(accessToken, back.token!);
    expect(done.statusCode, done.body).toBe(201);
    return json(done).id;
  }
  /** A user whose only way in is one identity (an unverified email, no password). */
  async function socialOnlyUser(subject: string) {
    provider.signInAs({ id: subject, email: uniqueEmail('social') });
    const started = json(await ssoStart(t, env(), { connectionId: untrusted.id })).url;
    const signedIn = json(await ssoVerify(t, env(), (await plainSignIn(t, started)).token!));
    return { userId: signedIn.user.id as string, accessToken: signedIn.session.accessToken as string };
  }
  async function events(type: string) {
    const rows = await t.store.db.selectFrom('webhook_events').select(['type', 'body']).where('environment_id', '=', env().id).where('type', '=', type).execute();
    return rows.map((r) => JSON.parse(r.body).data);
  }

  it('links a provider to the signed-in user whatever its email, lists it, signs in with it, and records identity.created', async () => {
    const me = await signUp(t);
    expect(json(await list(me.accessToken))).toEqual({ data: [] });
    const back = await link(me.accessToken, untrusted.id, { id: 'link-1', email: uniqueEmail('elsewhere') });
    expect(back.error, back.description ?? '').toBeNull();
    // Nothing is linked until the session that started it completes it with the token.
    expect(json(await list(me.accessToken)).data).toEqual([]);
    const done = await complete(me.accessToken, back.token!);
    expect(done.statusCode, done.body).toBe(201);
    expect(json(done).id).toMatch(/^idn_/);
    expect((await complete(me.accessToken, back.token!)).statusCode).toBe(400);
    const identities = json(await list(me.accessToken)).data;
    expect(identities).toEqual([{ id: json(done).id, connectionId: untrusted.id, type: 'oauth2', provider: 'oauth2', email: expect.stringContaining('elsewhere'), createdAt: expect.any(Number) }]);
    expect(await events('identity.created')).toContainEqual({ ...identities[0], userId: me.userId });
    // The linked provider now signs this user in.
    provider.signInAs({ id: 'link-1', email: uniqueEmail('whatever') });
    const signedIn = await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: untrusted.id })).url);
    expect(json(await ssoVerify(t, env(), signedIn.token!)).user.id).toBe(me.userId);
    // Linking it again is a no-op that answers the same identity.
    expect(await linked(me.accessToken, untrusted.id, { id: 'link-1', email: 'x@example.test' })).toBe(json(done).id);
    // The secret key reads the same list (the console's user page).
    expect(json(await t.call({ method: 'GET', url: `/v1/users/${me.userId}/identities`, credential: env().secretKey })).data).toEqual(json(await list(me.accessToken)).data);
  });

  it('unlinks with a password left; identity.deleted is recorded', async () => {
    const me = await signUp(t);
    const id = await linked(me.accessToken, untrusted.id, { id: 'unlink-1', email: uniqueEmail('u') });
    const answer = await unlink(me.accessToken, id);
    expect(answer.statusCode, answer.body).toBe(204);
    expect(json(await list(me.accessToken)).data).toEqual([]);
    expect(await events('identity.deleted')).toContainEqual(expect.objectContaining({ id, userId: me.userId, connectionId: untrusted.id }));
    expect((await unlink(me.accessToken, id)).statusCode).toBe(404);
  });

  it('never unlinks the last way to sign in (409 conflict); another identity is a way in', async () => {
    const me = await socialOnlyUser('last-1');
    const [only] = json(await list(me.accessToken)).data;
    const refused = await unlink(me.accessToken, only.id);
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error.code).toBe('conflict');
    expect(json(refused).error.message).toContain('last way to sign in');
    const second = await linked(me.accessToken, trusted.id, { id: 'last-2', email: uniqueEmail('second'), verified: true });
    expect((await unlink(me.accessToken, only.id)).statusCode).toBe(204);
    expect((await unlink(me.accessToken, second)).statusCode).toBe(409);
  });

  it('a verified email counts while the magic link or email code is on', async () => {
    const email = uniqueEmail('verified');
    provider.signInAs({ id: 'verified-1', email, verified: true });
    const signedIn = json(await ssoVerify(t, env(), (await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: trusted.id })).url)).token!));
    const [identity] = json(await list(signedIn.session.accessToken)).data;
    await t.setSettings(env().id, { authMethods: { password: true, magicLink: false, emailCode: false, sso: true } });
    try {
      expect((await unlink(signedIn.session.accessToken, identity.id)).statusCode).toBe(409);
      await t.setSettings(env().id, { authMethods: { password: true, magicLink: false, emailCode: true, sso: true } });
      expect((await unlink(signedIn.session.accessToken, identity.id)).statusCode).toBe(204);
    } finally {
      await enableSso(t, env());
    }
  });

  it('the secret key unlinks under the same rule', async () => {
    const me = await socialOnlyUser('sk-1');
    const [only] = json(await list(me.accessToken)).data;
    const url = `/v1/users/${me.userId}/identities/${only.id}`;
    expect((await t.call({ method: 'DELETE', url, credential: env().secretKey })).statusCode).toBe(409);
  });

  it('bad requests are clear 4xx: unknown connection, a redirect the origin lock refuses, missing fields, SSO off', async () => {
    const me = await signUp(t);
    const post = (payload: unknown) => t.call({ method: 'POST', url: '/v1/me/identities', credential: me.accessToken, payload: payload as object });
    expect((await post({ connectionId: 'ssoc_nope', redirectUrl: REDIRECT_URL })).statusCode).toBe(404);
    expect((await post({ connectionId: untrusted.id, redirectUrl: 'https://evil.test/x' })).statusCode).toBeGreaterThanOrEqual(400);
    expect((await post({ connectionId: untrusted.id, redirectUrl: 'https://evil.test/x' })).statusCode).toBeLessThan(500);
    const missing = await post({ redirectUrl: REDIRECT_URL });
    expect(missing.statusCode).toBe(400);
    expect(json(missing).error.details.fields).toContain('connectionId');
    expect((await t.call({ method: 'POST', url: '/v1/me/identities', credential: env().publishableKey, payload: { connectionId: untrusted.id, redirectUrl: REDIRECT_URL } })).statusCode).toBe(403);
    await enableSso(t, env(), false);
    try {
      const off = await post({ connectionId: untrusted.id, redirectUrl: REDIRECT_URL });
      expect(off.statusCode).toBe(403);
      expect(json(off).error.code).toBe('method_disabled');
    } finally {
      await enableSso(t, env());
    }
  });
});
