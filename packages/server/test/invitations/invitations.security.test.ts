import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, start, tokenFrom } from '../helpers/flows.js';
import { json, me, uniqueEmail } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser } from '../helpers/organizations.js';
import { INVITATIONS_PER_HOUR } from '../../src/invitations/service.js';

describe('invitation attacks', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, rateLimit: false });
  });
  afterAll(() => t.close());

  const sk = (method: 'GET' | 'POST', url: string, payload?: object) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload ? { payload } : {}) });
  const accept = (token: string) => start(t, 'invitations/accept', { token });

  async function invited(role = 'member') {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id);
    const address = uniqueEmail('target');
    const invitation = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role }));
    return { org, address, invitation, token: tokenFrom((await outbox(t, address))[0]!) };
  }

  async function memberCount(organizationId: string) {
    return json(await sk('GET', `/v1/organizations/${organizationId}/members`)).data.length;
  }

  const preview = (token: string, environment = t.project.development) => start(t, 'invitations/preview', { token }, environment);

  it("enumeration: the preview answers only the token's holder, masks the address, and refuses unknown, other-environment and settled tokens as accepting would", async () => {
    const { org, address, token, invitation } = await invited();
    const shown = await preview(token);
    expect(shown.statusCode, shown.body).toBe(200);
    const body = json(shown);
    expect(body).toEqual({
      organization: { id: org.id, name: expect.any(String), imageUrl: null },
      email: `${address[0]}***${address.slice(address.indexOf('@'))}`,
      role: 'member',
      expiresAt: invitation.expiresAt,
    });
    expect(shown.body).not.toContain(address);
    // An unknown token and a token of another environment answer alike, as accept does.
    const unknown = await preview(`${token}x`);
    const elsewhere = await preview(token, t.project.production);
    for (const refused of [unknown, elsewhere]) {
      expect(refused.statusCode).toBe(401);
      expect(json(refused).error).toEqual(json(await accept(`${token}x`)).error);
    }
    // The preview changes nothing: the token still accepts; once accepted, the preview refuses it too.
    const accepted = await accept(token);
    expect(accepted.statusCode).toBe(200);
    expect(json(accepted).organizationId).toBe(org.id);
    const settled = await preview(token);
    expect(settled.statusCode).toBe(409);
    expect(json(settled).error).toEqual(json(await accept(token)).error);
  });

  it('accepting one token twice at once yields one membership and one account', async () => {
    const { org, token, address } = await invited();
    const results = await Promise.all([accept(token), accept(token), accept(token)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
    expect(await memberCount(org.id)).toBe(2);
    const users = json(await sk('GET', `/v1/users?email=${encodeURIComponent(address)}`)).data;
    expect(users).toHaveLength(1);
  });

  it('accepted while being revoked ends accepted or revoked, never both', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { org, token, invitation } = await invited();
      const [accepted, revoked] = await Promise.all([
        accept(token),
        sk('POST', `/v1/organizations/${org.id}/invitations/${invitation.id}/revoke`),
      ]);
      const final = json(await sk('GET', `/v1/organizations/${org.id}/invitations`)).data[0].status;
      const members = await memberCount(org.id);
      if (final === 'accepted') {
        expect(accepted.statusCode).toBe(200);
        expect(revoked.statusCode).toBe(409);
        expect(members).toBe(2);
      } else {
        expect(final).toBe('revoked');
        expect(revoked.statusCode).toBe(200);
        expect(accepted.statusCode).toBe(409);
        expect(members).toBe(1);
      }
    }
  });

  it("pre-registration takeover: a squatter who registered the invitee's address with a password loses it when the owner accepts", async () => {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id);
    const address = uniqueEmail('victim');
    const squat = await t.call({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: t.project.development.publishableKey,
      payload: { email: address, password: 'squatter password 123' },
    });
    expect(squat.statusCode).toBe(201);
    await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'admin' });
    // The real owner of the mailbox opens the link.
    const accepted = await accept(tokenFrom((await outbox(t, address))[0]!));
    expect(accepted.statusCode, accepted.body).toBe(200);
    // The squatter's password and session no longer work; the admin membership is the owner's session's.
    expect((await me(t, json(squat).session.accessToken)).statusCode).toBe(401);
    const signIn = await t.call({
      method: 'POST',
      url: '/v1/auth/signin',
      credential: t.project.development.publishableKey,
      payload: { email: address, password: 'squatter password 123' },
    });
    expect(signIn.statusCode).toBe(401);
    expect(json(await me(t, json(accepted).session.accessToken)).organizations).toEqual([
      expect.objectContaining({ id: org.id, role: 'admin' }),
    ]);
  });

  it("renewing past the address's email allowance is refused with 429, and the link already sent keeps working", async () => {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id);
    const address = uniqueEmail('renewed');
    const invite = () => sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'member' });
    for (let i = 0; i < 5; i++) expect((await invite()).statusCode).toBe(201);
    const refused = await invite();
    expect(refused.statusCode).toBe(429);
    expect(json(refused).error.message).toContain('already sent still works');
    const newest = (await outbox(t, address))[0]!;
    expect((await accept(tokenFrom(newest))).statusCode).toBe(200);
  });

  it('a link replaced by a renewal is dead, even when it was looked up just before the renewal', async () => {
    const { org, token, address } = await invited();
    const [accepted] = await Promise.all([
      accept(token),
      sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'admin' }),
    ]);
    const members = json(await sk('GET', `/v1/organizations/${org.id}/members`)).data;
    // Either the old link won before the renewal (member), or it lost and joined nobody.
    if (accepted.statusCode === 200) expect(members.map((m: { role: string }) => m.role).sort()).toEqual(['member', 'owner']);
    else expect(members).toHaveLength(1);
  });

  it('a token is single-use', async () => {
    const { token } = await invited();
    expect((await accept(token)).statusCode).toBe(200);
    const again = await accept(token);
    expect(again.statusCode).toBe(409);
    expect(json(again).error.message).toContain('already accepted');
  });

  it('a token is useless in another environment, and a forged one is refused', async () => {
    const { token } = await invited();
    const elsewhere = await start(t, 'invitations/accept', { token }, t.project.production);
    expect(elsewhere.statusCode).toBe(401);
    expect(json(elsewhere).error.code).toBe('invalid_credentials');
    const forged = await accept(token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA'));
    expect(forged.statusCode).toBe(401);
    // The real one still works where it belongs.
    expect((await accept(token)).statusCode).toBe(200);
  });

  it('the token is stored only as a hash', async () => {
    const { token, invitation } = await invited();
    const row = await t.store.db
      .selectFrom('organization_invitations')
      .selectAll()
      .where('environment_id', '=', t.project.development.id as never)
      .where('id', '=', invitation.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(token);
  });

  it(`an invitation flood is bounded: ${INVITATIONS_PER_HOUR} invitation emails per organization per hour`, async () => {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id);
    for (let i = 0; i < INVITATIONS_PER_HOUR; i += 1) {
      const ok = await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail(`flood${i}`), role: 'member' });
      expect(ok.statusCode).toBe(201);
    }
    const refused = await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail('one-more'), role: 'member' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('3600');
    expect(json(refused).error.message).toContain(`${INVITATIONS_PER_HOUR} invitations in the last hour`);
    // Revoking does not make room: the bound counts emails sent.
    const some = json(await sk('GET', `/v1/organizations/${org.id}/invitations?status=pending`)).data[0];
    await sk('POST', `/v1/organizations/${org.id}/invitations/${some.id}/revoke`);
    expect((await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail('again'), role: 'member' })).statusCode).toBe(
      429,
    );
    // Another organization is not affected, and an hour later this one may invite again.
    const other = await createOrg(t, owner.id);
    expect((await sk('POST', `/v1/organizations/${other.id}/invitations`, { email: uniqueEmail(), role: 'member' })).statusCode).toBe(201);
    clock.advance(3_600_001);
    expect((await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail(), role: 'member' })).statusCode).toBe(201);
  });

  it('inviting is no enumeration oracle: a registered and an unregistered address get the same answer', async () => {
    const owner = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId);
    await actAs(t, owner, org.id);
    const registered = await plainUser(t, undefined, 'registered');
    const addresses = [registered.email, uniqueEmail('unregistered')];
    const answers = [];
    for (const email of addresses) {
      const res = await t.call({
        method: 'POST',
        url: '/v1/me/organization/invitations',
        credential: owner.accessToken,
        payload: { email, role: 'member' },
      });
      const { id: _id, email: _email, ...rest } = json(res);
      answers.push({ status: res.statusCode, body: rest, headers: Object.keys(res.headers).sort() });
    }
    expect(answers[0]).toEqual(answers[1]);
    // And the two emails are the same message but for the link's token.
    const mails = await Promise.all(addresses.map(async (a) => (await outbox(t, a))[0]!));
    const withoutToken = (m: { subject: string; text: string; html: string }) =>
      [m.subject, m.text, m.html].map((part) => part.replace(/token=[\w-]+/g, 'token=…'));
    expect(withoutToken(mails[0]!)).toEqual(withoutToken(mails[1]!));
  });

  it('a member without org:members:manage learns nothing: refused before the address or role is looked at', async () => {
    const owner = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId);
    const plain = await person(t, undefined, 'plain');
    await addMember(t, org.id, plain.userId, 'member');
    await actAs(t, plain, org.id);
    const answers = await Promise.all(
      [owner.email, uniqueEmail('nobody')].map((email) =>
        t.call({
          method: 'POST',
          url: '/v1/me/organization/invitations',
          credential: plain.accessToken,
          payload: { email, role: 'no-such-role' },
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([403, 403]);
    expect(json(answers[0]!)).toEqual(json(answers[1]!));
  });

  it('a demoted admin is refused at once with the token that still claims the permission', async () => {
    const owner = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId);
    const admin = await person(t, undefined, 'admin');
    await addMember(t, org.id, admin.userId, 'admin');
    await actAs(t, admin, org.id);
    await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${admin.userId}`,
      credential: t.project.development.secretKey,
      payload: { role: 'member' },
    });
    const refused = await t.call({
      method: 'POST',
      url: '/v1/me/organization/invitations',
      credential: admin.accessToken,
      payload: { email: uniqueEmail(), role: 'member' },
    });
    expect(refused.statusCode).toBe(403);
  });

  it("someone who signs up with the invitee's address but never proves it cannot see or take the invitation", async () => {
    const { invitation, address } = await invited();
    const squatter = await person(t, undefined, 'squatter');
    // The squatter registers the invited address itself, with a password: unverified.
    const squat = await t.call({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: t.project.development.publishableKey,
      payload: { email: address, password: 'squatter password 123' },
    });
    expect(squat.statusCode).toBe(201);
    const token = json(squat).session.accessToken;
    expect(json(await t.call({ method: 'GET', url: '/v1/me/invitations', credential: token })).data).toEqual([]);
    const taken = await t.call({ method: 'POST', url: `/v1/me/invitations/${invitation.id}/accept`, credential: token });
    expect(taken.statusCode).toBe(403);
    expect(json(await me(t, squatter.accessToken)).organizations).toEqual([]);
  });
});
