import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatehouse, GatehouseError, type Gatehouse, type GatehouseState } from '../src/index.js';
import {
  codeFrom,
  GOOD_PASSWORD,
  makePng,
  outbox,
  REDIRECT,
  startLiveGatehouse,
  tokenFrom,
  uniqueEmail,
  type LiveGatehouse,
} from './helpers/gatehouse.js';

/** Every flow in Node 20 (default storage: memory) against a real Gatehouse over HTTP. */
let live: LiveGatehouse;
const clients: Gatehouse[] = [];
beforeAll(async () => {
  live = await startLiveGatehouse();
});
afterAll(async () => {
  for (const gh of clients) gh.destroy();
  await live.close();
});

async function client(options: { backendOrigins?: string[] } = {}): Promise<Gatehouse> {
  const gh = createGatehouse({ publishableKey: live.t.project.development.publishableKey, baseUrl: live.url, ...options });
  clients.push(gh);
  await gh.load();
  return gh;
}

describe('flows against a real server', () => {
  it('sign-up, profile, avatar, organizations, members, organization image, switching, sign-out', async () => {
    const gh = await client();
    expect(gh.state).toMatchObject({ isLoaded: true, isSignedIn: false });
    const email = uniqueEmail('js');
    let state: GatehouseState = await gh.signUp({ email, password: GOOD_PASSWORD, firstName: 'Ada' });
    expect(state).toMatchObject({ isSignedIn: true, user: { email, firstName: 'Ada' }, organization: null });

    state = await gh.user.update({ lastName: 'Lovelace' });
    expect(state.user).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' });

    state = await gh.user.setAvatar(makePng(40, 30, { seed: 7 }));
    expect(state.user?.imageUrl).toMatch(new RegExp(`^${live.url}/v1/assets/`));
    const stored = await fetch(state.user!.imageUrl!);
    expect(stored.headers.get('content-type')).toBe('image/png');

    const org = await gh.organizations.create({ name: 'Analytical Engines' });
    expect(gh.state.organizations.map((o) => o.id)).toContain(org.id);
    state = await gh.setActiveOrganization(org.id);
    expect(state.organization).toMatchObject({ id: org.id, role: 'owner' });
    expect(state.session).toMatchObject({ organizationId: org.id, organizationRole: 'owner' });

    const other = uniqueEmail('member');
    await live.t.call({ method: 'POST', url: '/v1/users', credential: live.t.project.development.secretKey, payload: { email: other } });
    const added = await gh.organization.members.add({ email: other, role: 'admin' });
    const members = await gh.organization.members.list({ limit: 10 });
    expect(members.data.map((m) => [m.email, m.role])).toEqual([
      [email, 'owner'],
      [other, 'admin'],
    ]);
    expect((await gh.organization.members.updateRole(added.userId, 'member')).role).toBe('member');
    expect((await gh.organization.members.remove(added.userId)).removed).toBe(true);

    await gh.organization.setImage(makePng(64, 64, { seed: 8 }));
    expect(gh.state.organization?.imageUrl).toMatch(new RegExp(`^${live.url}/v1/assets/`));

    state = await gh.setActiveOrganization(null);
    expect(state.organization).toBeNull();
    expect((await gh.sessions.list()).filter((s) => s.current)).toHaveLength(1);

    const accessToken = (await gh.getToken())!;
    state = await gh.signOut();
    expect(state).toMatchObject({ isSignedIn: false, user: null });
    // The server revoked it too: the old access token no longer reads /v1/me.
    const me = await fetch(`${live.url}/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(401);
  });

  it('email code, magic link with handleRedirect, password reset', async () => {
    const gh = await client();
    const email = uniqueEmail('flows');
    await gh.signUp({ email, password: GOOD_PASSWORD });
    await gh.signOut();

    await gh.signIn.emailCode.start({ email });
    const code = codeFrom((await outbox(live.t, email)).find((m) => m.kind === 'email_code')!);
    expect(await gh.signIn.emailCode.verify({ code })).toMatchObject({ isSignedIn: true, user: { email } });
    await gh.signOut();

    await gh.signIn.magicLink.start({ email, redirectUrl: REDIRECT });
    const link = new URL(REDIRECT);
    link.searchParams.set('token', tokenFrom((await outbox(live.t, email)).find((m) => m.kind === 'magic_link')!));
    expect(await gh.handleRedirect(link)).toMatchObject({ isSignedIn: true, user: { email } });
    expect((await gh.handleRedirect(REDIRECT)).isSignedIn).toBe(true); // nothing to handle
    await expect(gh.handleRedirect(`${REDIRECT}?error=access_denied&error_description=Denied.`)).rejects.toMatchObject({
      code: 'access_denied',
      message: 'Denied.',
    });

    await gh.passwordReset.start({ email, redirectUrl: REDIRECT });
    const token = tokenFrom((await outbox(live.t, email)).find((m) => m.kind === 'password_reset')!);
    const result = await gh.passwordReset.complete({ token, newPassword: 'a brand new passphrase 42' });
    expect(result).toMatchObject({ reset: true });
    expect(gh.state.isSignedIn).toBe(false); // the reset revoked this session too
    expect(await gh.signIn.password({ email, password: 'a brand new passphrase 42' })).toMatchObject({ isSignedIn: true });
  });

  it('invitations, domains, suggestions and membership requests', async () => {
    const admin = await client();
    await admin.signUp({ email: uniqueEmail('admin'), password: GOOD_PASSWORD });
    const org = await admin.organizations.create({ name: 'Invitational' });
    await admin.setActiveOrganization(org.id);

    // A newcomer accepts from the emailed link and gets an account.
    const newcomer = uniqueEmail('newcomer');
    const invitation = await admin.organization.invitations.create({ email: newcomer, role: 'member', redirectUrl: REDIRECT });
    expect((await admin.organization.invitations.list({ status: 'pending' })).map((i) => i.id)).toEqual([invitation.id]);
    const invitee = await client();
    const state = await invitee.invitations.acceptFromLink({ token: tokenFrom((await outbox(live.t, newcomer))[0]!), firstName: 'Nia' });
    expect(state).toMatchObject({ isSignedIn: true, user: { email: newcomer, firstName: 'Nia', emailVerified: true } });
    expect(state.organizations.map((o) => o.id)).toEqual([org.id]);

    // A signed-in user whose address is verified accepts from their list.
    const second = await client();
    const address = uniqueEmail('second');
    await second.signIn.emailCode.start({ email: address });
    await second.signIn.emailCode.verify({ code: codeFrom((await outbox(live.t, address))[0]!) });
    const pending = await admin.organization.invitations.create({ email: address, role: 'admin' });
    expect((await second.invitations.list()).map((i) => [i.id, i.organization.name])).toEqual([[pending.id, 'Invitational']]);
    expect(await second.invitations.accept(pending.id)).toMatchObject({ role: 'admin', email: address });
    expect(second.state.organizations.map((o) => o.id)).toEqual([org.id]);

    // A link marked by invitations.create() is accepted by handleRedirect(), and the mark leaves the URL.
    const third = uniqueEmail('third');
    await admin.organization.invitations.create({ email: third, role: 'member', redirectUrl: REDIRECT });
    const mail = (await outbox(live.t, third))[0]!;
    const link = new URL(/(https?:\/\/\S+)/.exec(mail.text)![1]!);
    expect(link.searchParams.get('__gh_invitation')).toBe('1');
    const thirdClient = await client();
    expect(await thirdClient.handleRedirect(link)).toMatchObject({ isSignedIn: true, user: { email: third } });
    expect(thirdClient.state.organizations.map((o) => o.id)).toEqual([org.id]);

    const revoked = await admin.organization.invitations.create({ email: uniqueEmail('gone'), role: 'member' });
    expect((await admin.organization.invitations.revoke(revoked.id)).status).toBe('revoked');

    // A domain verified by code, which suggests the organization to a colleague, who asks to join.
    const domain = `js-${Date.now().toString(36)}.example`;
    const added = await admin.organization.domains.create({ name: domain, enrollmentMode: 'automatic_suggestion', email: `it@${domain}` });
    expect(added.verified).toBe(false);
    const verified = await admin.organization.domains.verify(added.id, codeFrom((await outbox(live.t, `it@${domain}`))[0]!));
    expect(verified.verified).toBe(true);
    const colleague = await client();
    await colleague.signIn.emailCode.start({ email: `bob@${domain}` });
    await colleague.signIn.emailCode.verify({ code: codeFrom((await outbox(live.t, `bob@${domain}`))[0]!) });
    const [suggestion] = await colleague.suggestions.list();
    expect(suggestion).toMatchObject({ status: 'suggested', organization: { id: org.id } });
    expect((await colleague.suggestions.accept(suggestion!.id)).status).toBe('pending');
    const [request] = await admin.organization.membershipRequests.list();
    expect(request).toMatchObject({ email: `bob@${domain}`, status: 'pending' });
    expect((await admin.organization.membershipRequests.accept(request!.id)).status).toBe('accepted');
    expect((await admin.organization.domains.update(added.id, 'manual_invitation')).enrollmentMode).toBe('manual_invitation');
    expect(await admin.organization.domains.remove(added.id)).toEqual({ id: added.id, deleted: true });
  });

  it('verified sign-up: signUp() answers verification_required, signUp.verify({code}) creates the account', async () => {
    // A fresh environment requires a verified email (the test helper turned it off for the default project).
    const env = (await live.t.createProject('Verified sign-up')).development;
    await live.t.setSettings(env.id, { emailVerification: 'required' });
    const gh = createGatehouse({ publishableKey: env.publishableKey, baseUrl: live.url });
    clients.push(gh);
    await gh.load();
    const email = uniqueEmail('verified');
    const started = await gh.signUp({ email, password: GOOD_PASSWORD, firstName: 'Vera' });
    expect(started).toMatchObject({ status: 'verification_required', isSignedIn: false, user: null });
    expect(started.signUpId).toMatch(/^su_/);
    const code = codeFrom((await outbox(live.t, email, env)).find((m) => m.kind === 'sign_up_verification')!);
    // A wrong code is the catalogue's refusal and leaves the attempt usable.
    const wrong = await gh.signUp.verify({ code: code === '000000' ? '111111' : '000000' }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(GatehouseError);
    expect(gh.state.isSignedIn).toBe(false);
    const state = await gh.signUp.verify({ code });
    expect(state).toMatchObject({ isSignedIn: true, user: { email, firstName: 'Vera', emailVerified: true } });
    // With verification off the same call signs in at once.
    await live.t.setSettings(env.id, { emailVerification: 'off' });
    await gh.signOut();
    expect(await gh.signUp({ email: uniqueEmail('direct'), password: GOOD_PASSWORD })).toMatchObject({ status: 'complete', signUpId: null, isSignedIn: true });
  });

  it('signIn.actorToken: an impersonated session exposes session.actor, keeps it across a refresh, and a used token is refused', async () => {
    const user = await client();
    const email = uniqueEmail('acted');
    const own = await user.signUp({ email, password: GOOD_PASSWORD });
    expect(own.session?.actor).toBeNull();
    const minted = await live.t.call({
      method: 'POST',
      url: '/v1/actor-tokens',
      credential: live.t.project.development.secretKey,
      payload: { userId: own.user!.id, actor: { sub: 'support:ada' } },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const { token } = minted.json() as { token: string };
    const gh = await client();
    const state = await gh.signIn.actorToken({ token });
    expect(state).toMatchObject({ isSignedIn: true, session: { userId: own.user!.id, actor: { sub: 'support:ada' } } });
    await gh.getToken({ forceRefresh: true });
    expect(gh.state.session?.actor).toEqual({ sub: 'support:ada' });
    const again = await client();
    const refused = await again.signIn.actorToken({ token }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatehouseError);
    expect(refused).toMatchObject({ status: 401, code: 'invalid_credentials' });
  });

  it('refusals are GatehouseError with the catalogue code, status and message', async () => {
    const gh = await client();
    const error = await gh.signIn.password({ email: uniqueEmail('nobody'), password: 'wrong password here' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatehouseError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_credentials', message: expect.any(String) });
    expect(gh.state.isSignedIn).toBe(false);
    const env = await gh.environment();
    expect(env).toMatchObject({ type: 'development', authMethods: { password: true } });
    const down = createGatehouse({ publishableKey: 'pk_test_x', baseUrl: 'http://127.0.0.1:9' });
    await expect(down.environment()).rejects.toMatchObject({ status: 0, code: 'unavailable' });
  });

  it("fetch() for the app's backend sends the bearer token, and on a 401 refreshes once and retries once", async () => {
    const seen: (string | undefined)[] = [];
    // An application backend that refuses the first token it sees, and every request after the second.
    const backend = createServer((request, response) => {
      seen.push(request.headers.authorization);
      response.writeHead(seen.length === 2 ? 200 : 401).end();
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
    const gh = await client({ backendOrigins: [origin] });
    await gh.signUp({ email: uniqueEmail('backend'), password: GOOD_PASSWORD });
    try {
      const before = live.refreshes.length;
      const first = await gh.fetch(`${origin}/api`);
      expect(first.status).toBe(200);
      expect(seen).toHaveLength(2);
      expect(seen[0]).toMatch(/^Bearer ey/);
      expect(seen[1]).toMatch(/^Bearer ey/);
      expect(seen[1]).not.toBe(seen[0]);
      expect(live.refreshes.length - before).toBe(1);
      // The token that refresh produced is refused too: that is the backend's answer, not a stale
      // token, so it is returned without another refresh, however often the app asks.
      for (let i = 0; i < 3; i++) expect((await gh.fetch(`${origin}/api`)).status).toBe(401);
      expect(seen).toHaveLength(5);
      expect(seen.slice(2).every((header) => header === seen[1])).toBe(true);
      expect(live.refreshes.length - before).toBe(1);
    } finally {
      await new Promise((resolve) => backend.close(resolve));
    }
  });

  it('fetch() refuses to hand the access token to an origin that is not Gatehouse or a listed backend', async () => {
    const gh = await client({ backendOrigins: ['https://api.example.com'] });
    await gh.signUp({ email: uniqueEmail('leak'), password: GOOD_PASSWORD });
    const before = live.refreshes.length;
    await expect(gh.fetch('https://tracker.example.net/collect')).rejects.toThrow(
      /only to this page's origin, Gatehouse and backendOrigins; https:\/\/tracker\.example\.net is none of them/,
    );
    await expect(gh.fetch(new Request('https://api.example.com.evil.test/x'))).rejects.toThrow(TypeError);
    // Gatehouse itself is always allowed: its own API takes the token.
    expect((await gh.fetch(`${live.url}/v1/me`)).status).toBe(200);
    expect(live.refreshes.length).toBe(before);
  });
});
