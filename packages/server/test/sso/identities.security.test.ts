import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, me, refresh, signUp, uniqueEmail } from '../helpers/identity.js';
import { startOAuth2Server } from '../helpers/oauth2-server.js';
import { codeFrom, outbox, start } from '../helpers/flows.js';
import { plainSignIn } from '../helpers/social.js';
import { createConnection, enableSso, REDIRECT_URL, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

describe(`Linked identities: attacks (${testDb()})`, () => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startOAuth2Server>>;
  let connection: { id: string };
  const env = () => t.project.development;

  beforeAll(async () => {
    provider = await startOAuth2Server({ clientId: 'c', clientSecret: 's', authMethod: 'client_secret_basic' });
    t = await startTestApp();
    await enableSso(t, env());
    connection = json(
      await createConnection(t, env(), {
        type: 'oauth2',
        name: 'Acme',
        domains: [],
        authorizationUrl: `${provider.base}/authorize`,
        tokenUrl: `${provider.base}/token`,
        userinfoUrl: `${provider.base}/userinfo`,
        clientId: 'c',
        clientSecret: 's',
        userinfoFields: { id: 'id', email: 'email' },
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  async function socialUser(subject: string) {
    provider.signInAs({ id: subject, email: uniqueEmail('social') });
    const signedIn = json(await ssoVerify(t, env(), (await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url)).token!));
    return { userId: signedIn.user.id as string, accessToken: signedIn.session.accessToken as string };
  }
  async function link(accessToken: string, as: unknown) {
    const started = json(await t.call({ method: 'POST', url: '/v1/me/identities', credential: accessToken, payload: { connectionId: connection.id, redirectUrl: REDIRECT_URL } })).url;
    provider.signInAs(as);
    return plainSignIn(t, started);
  }
  const complete = (accessToken: string, token: string) => t.call({ method: 'POST', url: '/v1/me/identities/complete', credential: accessToken, payload: { token } });
  const identities = async (accessToken: string) => json(await t.call({ method: 'GET', url: '/v1/me/identities', credential: accessToken })).data as { id: string }[];

  it("takeover by linking: someone else's provider account is refused (error=account_exists) and stays theirs", async () => {
    const victim = await socialUser('victim-subject');
    const attacker = await signUp(t);
    const back = await link(attacker.accessToken, { id: 'victim-subject', email: attacker.email });
    expect(back.token).toBeNull();
    expect(back.error).toBe('account_exists');
    expect(await identities(attacker.accessToken)).toEqual([]);
    expect(await identities(victim.accessToken)).toHaveLength(1);
    provider.signInAs({ id: 'victim-subject', email: 'x@example.test' });
    const signedIn = await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url);
    expect(json(await ssoVerify(t, env(), signedIn.token!)).user.id).toBe(victim.userId);
  });

  it("pre-registration takeover through a provider that vouches for nothing: the owner's first proof of the address removes the squatter's identity", async () => {
    const victim = uniqueEmail('owner');
    // The squatter's provider account carries the victim's address, unverified: an account is made.
    provider.signInAs({ id: 'squatter', email: victim });
    const squatted = json(await ssoVerify(t, env(), (await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url)).token!));
    expect(squatted.user.email).toBe(victim);
    // The owner signs in with an emailed code: the address is proven, the squatter's way in goes.
    expect((await start(t, 'email-code', { email: victim })).statusCode).toBe(202);
    const [mail] = await outbox(t, victim);
    const owner = await start(t, 'email-code/verify', { email: victim, code: codeFrom(mail!) });
    expect(owner.statusCode, owner.body).toBe(200);
    expect(json(owner).user.id).toBe(squatted.user.id);
    expect(await identities(json(owner).session.accessToken)).toEqual([]);
    provider.signInAs({ id: 'squatter', email: victim });
    const again = await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url);
    expect(again.token).toBeNull();
    expect(again.error).toBe('account_exists');
    const events = await t.store.db.selectFrom('webhook_events').select('body').where('environment_id', '=', env().id).where('type', '=', 'identity.deleted').execute();
    expect(events.map((e) => JSON.parse(e.body).data.userId)).toContain(squatted.user.id);
  });

  /** The owner of `email` signs in with an emailed code: the address's first proof. */
  async function ownerProves(email: string) {
    expect((await start(t, 'email-code', { email })).statusCode).toBe(202);
    const [mail] = await outbox(t, email);
    const owner = await start(t, 'email-code/verify', { email, code: codeFrom(mail!) });
    expect(owner.statusCode, owner.body).toBe(200);
    return json(owner) as { user: { id: string }; session: { accessToken: string } };
  }

  it("pre-registration takeover through an unvouched provider: the owner's first proof ends the squatter's session, refresh token and pending sign-in", async () => {
    const victim = uniqueEmail('owner');
    provider.signInAs({ id: 'squatter-session', email: victim });
    const squatted = json(await ssoVerify(t, env(), (await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url)).token!));
    // A second sign-in finished at the provider but not yet redeemed: its token waits.
    const pending = (await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url)).token!;
    expect(pending).toBeTruthy();
    expect((await me(t, squatted.session.accessToken)).statusCode).toBe(200);
    const owner = await ownerProves(victim);
    expect(owner.user.id).toBe(squatted.user.id);
    expect((await me(t, squatted.session.accessToken)).statusCode).toBe(401);
    expect((await refresh(t, squatted.session.refreshToken)).statusCode).toBe(401);
    expect((await ssoVerify(t, env(), pending)).statusCode).toBe(401);
    expect((await me(t, owner.session.accessToken)).statusCode).toBe(200);
  });

  it("pre-registration takeover by explicit link: a provider account the squatter linked before the owner's proof goes with the password", async () => {
    const victim = uniqueEmail('owner');
    // The squatter signs up with the victim's address and a password, and links their own provider account.
    const squatter = await signUp(t, { email: victim });
    const back = await link(squatter.accessToken, { id: 'squatter-linked', email: uniqueEmail('squatter') });
    expect((await complete(squatter.accessToken, back.token!)).statusCode).toBe(201);
    expect(await identities(squatter.accessToken)).toHaveLength(1);
    const owner = await ownerProves(victim);
    expect(owner.user.id).toBe(squatter.userId);
    expect(await identities(owner.session.accessToken)).toEqual([]);
    expect((await me(t, squatter.accessToken)).statusCode).toBe(401);
    // The squatter's provider account no longer reaches the owner's account.
    provider.signInAs({ id: 'squatter-linked', email: uniqueEmail('squatter') });
    const again = await plainSignIn(t, json(await ssoStart(t, env(), { connectionId: connection.id })).url);
    expect(again.token, again.error ?? '').toBeTruthy();
    expect(json(await ssoVerify(t, env(), again.token!)).user.id).not.toBe(owner.user.id);
  });

  it("an explicit link made after the address is proven is kept at later proofs (it is the proven owner's)", async () => {
    const email = uniqueEmail('proven');
    await signUp(t, { email });
    const owner = await ownerProves(email);
    const back = await link(owner.session.accessToken, { id: 'owner-linked', email: uniqueEmail('other') });
    expect((await complete(owner.session.accessToken, back.token!)).statusCode).toBe(201);
    const rows = await t.store.db.selectFrom('sso_identities').select('email_trusted').where('environment_id', '=', env().id).where('subject', '=', 'owner-linked').execute();
    expect(rows.map((r) => Number(r.email_trusted))).toEqual([1]);
  });

  it("unlinking another user's identity by its id is 404, and theirs stays", async () => {
    const victim = await socialUser('victim-2');
    const attacker = await signUp(t);
    const [theirs] = await identities(victim.accessToken);
    const answer = await t.call({ method: 'DELETE', url: `/v1/me/identities/${theirs!.id}`, credential: attacker.accessToken });
    expect(answer.statusCode).toBe(404);
    expect(await identities(victim.accessToken)).toHaveLength(1);
  });

  it('racing unlinks of the last two identities: exactly one succeeds, one way in remains', async () => {
    for (let round = 0; round < 3; round++) {
      const me = await socialUser(`race-a-${round}`);
      expect((await complete(me.accessToken, (await link(me.accessToken, { id: `race-b-${round}`, email: uniqueEmail('b') })).token!)).statusCode).toBe(201);
      const [a, b] = await identities(me.accessToken);
      const answers = await Promise.all([a, b].map((i) => t.call({ method: 'DELETE', url: `/v1/me/identities/${i!.id}`, credential: me.accessToken })));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([204, 409]);
      expect(await identities(me.accessToken)).toHaveLength(1);
    }
  });

  it("a link start's state is single-use: replaying the callback links nothing more and is a 400", async () => {
    const me = await signUp(t);
    const started = json(await t.call({ method: 'POST', url: '/v1/me/identities', credential: me.accessToken, payload: { connectionId: connection.id, redirectUrl: REDIRECT_URL } })).url;
    provider.signInAs({ id: 'replay-1', email: uniqueEmail('r') });
    const first = await t.call({ method: 'GET', url: new URL((await fetch(started, { redirect: 'manual' })).headers.get('location')!).pathname + new URL((await fetch(started, { redirect: 'manual' })).headers.get('location')!).search });
    expect(first.statusCode).toBe(303);
    expect(new URL(String(first.headers.location)).searchParams.get('token')).toBeTruthy();
    // The same callback URL again (same state).
    const location = new URL(String((await fetch(started, { redirect: 'manual' })).headers.get('location')));
    const replay = await t.call({ method: 'GET', url: location.pathname + location.search });
    expect(replay.statusCode).toBe(400);
  });

  it("link CSRF: a link started by one user and finished in another person's browser links nothing to the starter's account", async () => {
    const attacker = await signUp(t);
    const victim = await signUp(t);
    // The attacker starts a link and gets the victim to finish it at the provider as themselves.
    const back = await link(attacker.accessToken, { id: 'csrf-victim-at-provider', email: victim.email });
    // The victim's page completes it with the victim's own session: refused, nothing linked anywhere.
    const answer = await complete(victim.accessToken, back.token!);
    expect(answer.statusCode).toBe(400);
    expect(json(answer).error.code).toBe('invalid_request');
    expect(await identities(attacker.accessToken)).toEqual([]);
    expect(await identities(victim.accessToken)).toEqual([]);
    // Nor can the token sign anyone in.
    const signIn = await ssoVerify(t, env(), back.token!);
    expect(signIn.statusCode).toBe(401);
  });

  it('a link token is not a sign-in token: sso/verify refuses it, and it still completes only for its user', async () => {
    const me = await signUp(t);
    const back = await link(me.accessToken, { id: 'not-a-sign-in', email: uniqueEmail('n') });
    expect((await ssoVerify(t, env(), back.token!)).statusCode).toBe(401);
    expect((await complete(me.accessToken, back.token!)).statusCode).toBe(201);
  });

  it('a link started in one environment cannot be completed in another (the state is not found there)', async () => {
    const other = await t.createProject('Other');
    await enableSso(t, other.development);
    const me = await signUp(t);
    const started = json(await t.call({ method: 'POST', url: '/v1/me/identities', credential: me.accessToken, payload: { connectionId: connection.id, redirectUrl: REDIRECT_URL } })).url;
    // The other environment's key cannot start a link for this user at all.
    const cross = await t.call({ method: 'POST', url: '/v1/me/identities', credential: other.development.publishableKey, payload: { connectionId: connection.id, redirectUrl: REDIRECT_URL } });
    expect(cross.statusCode).toBe(403);
    expect(started).toContain(provider.base);
  });
});
