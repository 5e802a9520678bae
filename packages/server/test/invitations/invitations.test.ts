import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, json, me, signIn, uniqueEmail } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser } from '../helpers/organizations.js';

describe('organization invitations', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const sk = (method: 'GET' | 'POST', url: string, payload?: object) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload ? { payload } : {}) });
  const as = (who: { accessToken: string }, method: 'GET' | 'POST', url: string, payload?: object) =>
    t.call({ method, url, credential: who.accessToken, ...(payload ? { payload } : {}) });
  const acceptWithToken = (payload: object) => start(t, 'invitations/accept', payload);

  async function newOrg() {
    const owner = await plainUser(t, undefined, 'owner');
    return createOrg(t, owner.id, { name: 'Initech' });
  }

  it('invites an address with no account; the emailed link creates the account, verified, and joins it', async () => {
    const org = await newOrg();
    const address = uniqueEmail('Newcomer');
    const created = await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'admin', redirectUrl: REDIRECT });
    expect(created.statusCode, created.body).toBe(201);
    const invitation = json(created);
    expect(invitation).toEqual({
      id: expect.stringMatching(/^orginv_/),
      organizationId: org.id,
      email: address,
      role: 'admin',
      status: 'pending',
      expiresAt: clock.now() + 7 * 86_400_000,
      createdAt: clock.now(),
    });

    const [email] = await outbox(t, address);
    expect(email).toMatchObject({ kind: 'organization_invitation', subject: 'You are invited to join Initech on Test project' });
    expect(email!.text).toContain('7 days');
    const link = new URL(/(https?:\/\/\S+)/.exec(email!.text)![1]!);
    expect(link.origin + link.pathname).toBe(REDIRECT);

    // The accept page reads the invitation first: the organization, and the address masked.
    const preview = await start(t, 'invitations/preview', { token: tokenFrom(email!) });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(json(preview)).toMatchObject({ organization: { id: org.id, name: 'Initech', imageUrl: null }, email: `${address[0]}***@example.test`, role: 'admin' });
    const accepted = await acceptWithToken({ token: tokenFrom(email!), password: GOOD_PASSWORD, firstName: 'Nia' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const { user, session, organizationId } = json(accepted);
    expect(organizationId).toBe(org.id);
    expect(user.email).toBe(address);
    const profile = json(await me(t, session.accessToken));
    expect(profile.user).toMatchObject({ email: address, firstName: 'Nia', emailVerified: true, passwordEnabled: true });
    expect(profile.organizations).toEqual([expect.objectContaining({ id: org.id, role: 'admin' })]);
    expect((await signIn(t, address, GOOD_PASSWORD)).statusCode).toBe(200);

    const listed = json(await sk('GET', `/v1/organizations/${org.id}/invitations`));
    expect(listed.data).toEqual([{ ...invitation, status: 'accepted' }]);
  });

  it('works while sign-up is closed (invitation-only applications)', async () => {
    const { project } = t;
    const closed = await t.call({
      method: 'PATCH',
      url: `/v1/platform/environments/${project.production.id}`,
      credential: t.platformKey,
      payload: { signUp: false, authMethods: { password: true, magicLink: true, emailCode: true, sso: false } },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    const owner = await plainUser(t, project.production, 'owner');
    const org = await createOrg(t, owner.id, { environment: project.production });
    const address = uniqueEmail('invited');
    const created = await t.call({
      method: 'POST',
      url: `/v1/organizations/${org.id}/invitations`,
      credential: project.production.secretKey,
      payload: { email: address, role: 'member' },
    });
    expect(created.statusCode, created.body).toBe(201);
    // Production mail is not captured; the token comes from the outbox row the worker would send.
    const row = await t.store.db
      .selectFrom('email_outbox')
      .select(['text_body', 'kind'])
      .where('environment_id', '=', project.production.id as never)
      .where('to_address', '=', address)
      .executeTakeFirstOrThrow();
    expect(row.kind).toBe('organization_invitation');
    // No redirectUrl: the link leads to the hosted accept page.
    const link = new URL(/(https?:\/\/\S+)/.exec(row.text_body)![1]!);
    expect(link.origin + link.pathname).toBe(`${BASE_URL}/hosted/${project.production.id}/accept-invitation`);
    const accepted = await start(t, 'invitations/accept', { token: link.searchParams.get('token') }, project.production);
    expect(accepted.statusCode, accepted.body).toBe(200);
    // Sign-up itself stays closed.
    const signup = await t.call({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: project.production.publishableKey,
      payload: { email: uniqueEmail('walk-in'), password: GOOD_PASSWORD },
    });
    expect(signup.statusCode).toBe(403);
  });

  it('signs an existing user in with the link, verifies their address, and refuses a password for them', async () => {
    const org = await newOrg();
    const invitee = await person(t, undefined, 'existing');
    await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: invitee.email.toUpperCase(), role: 'member' });
    const [email] = await outbox(t, invitee.email);
    const token = tokenFrom(email!);

    const withPassword = await acceptWithToken({ token, password: 'another fine password' });
    expect(withPassword.statusCode).toBe(400);
    expect(json(withPassword).error.details.fields).toEqual(['password']);

    const accepted = await acceptWithToken({ token });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(json(accepted).user.id).toBe(invitee.userId);
    const session = json(accepted).session.accessToken;
    expect(json(await me(t, session)).user.emailVerified).toBe(true);
    expect(json(await me(t, session)).organizations.map((o: { id: string }) => o.id)).toEqual([org.id]);
    // The password was set before anyone proved the address: it and its sessions are gone.
    expect((await me(t, invitee.accessToken)).statusCode).toBe(401);
  });

  it('refreshes a pending invitation when the same address is invited again: one invitation, the old link dead', async () => {
    const org = await newOrg();
    const address = uniqueEmail('twice');
    const first = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'member' }));
    const oldToken = tokenFrom((await outbox(t, address))[0]!);
    clock.advance(60_000);
    const second = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'admin', expiresInDays: 2 }));
    expect(second).toMatchObject({ id: first.id, role: 'admin', status: 'pending', expiresAt: clock.now() + 2 * 86_400_000 });
    expect(json(await sk('GET', `/v1/organizations/${org.id}/invitations?status=pending`)).data).toHaveLength(1);

    const stale = await acceptWithToken({ token: oldToken });
    expect(stale.statusCode).toBe(401);
    expect(json(stale).error.code).toBe('invalid_credentials');
    const fresh = await acceptWithToken({ token: tokenFrom((await outbox(t, address))[0]!) });
    expect(fresh.statusCode).toBe(200);
  });

  it('refuses inviting a member (409), an unknown role (400) and a redirect off the origin lock (400)', async () => {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id);
    const conflict = await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: owner.email, role: 'member' });
    expect(conflict.statusCode).toBe(409);
    expect(json(conflict).error.message).toContain('already a member');
    const role = await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail(), role: 'wizard' });
    expect(role.statusCode).toBe(400);
    expect(json(role).error.details.fields).toEqual(['role']);
    const redirect = await sk('POST', `/v1/organizations/${org.id}/invitations`, {
      email: uniqueEmail(),
      role: 'member',
      redirectUrl: 'https://evil.example/steal',
    });
    expect(redirect.statusCode).toBe(400);
    expect(json(redirect).error.details.fields).toEqual(['redirectUrl']);
    const days = await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail(), role: 'member', expiresInDays: 31 });
    expect(days.statusCode).toBe(400);
    const missing = await sk('POST', `/v1/organizations/org_missing/invitations`, { email: uniqueEmail(), role: 'member' });
    expect(missing.statusCode).toBe(404);
  });

  it('revokes: the link stops working, the listing says revoked, and revoking again changes nothing', async () => {
    const org = await newOrg();
    const address = uniqueEmail('revoked');
    const invitation = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'member' }));
    const revoked = await sk('POST', `/v1/organizations/${org.id}/invitations/${invitation.id}/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(json(revoked).status).toBe('revoked');
    expect((await sk('POST', `/v1/organizations/${org.id}/invitations/${invitation.id}/revoke`)).statusCode).toBe(200);
    const used = await acceptWithToken({ token: tokenFrom((await outbox(t, address))[0]!) });
    expect(used.statusCode).toBe(409);
    expect(json(used).error.message).toContain('revoked');
    expect(json(await sk('GET', `/v1/organizations/${org.id}/invitations?status=revoked`)).data.map((i: { id: string }) => i.id)).toEqual([
      invitation.id,
    ]);
  });

  it('expires: after its days the invitation reads expired and its link says so', async () => {
    const org = await newOrg();
    const address = uniqueEmail('late');
    const invitation = json(
      await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'member', expiresInDays: 1 }),
    );
    clock.advance(86_400_000 + 1);
    expect(json(await sk('GET', `/v1/organizations/${org.id}/invitations?status=expired`)).data).toEqual([
      { ...invitation, status: 'expired' },
    ]);
    const late = await acceptWithToken({ token: tokenFrom((await outbox(t, address))[0]!) });
    expect(late.statusCode).toBe(409);
    expect(json(late).error.message).toContain('expired');
    // Inviting again renews the expired one (still the one pending row).
    const renewed = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'member' }));
    expect(renewed).toMatchObject({ id: invitation.id, status: 'pending' });
  });

  describe('on the session surface', () => {
    it('members with org:members:manage invite, list and revoke; others are refused before anything is read', async () => {
      const owner = await person(t, undefined, 'owner');
      const org = await createOrg(t, owner.userId);
      const plain = await person(t, undefined, 'plain');
      await addMember(t, org.id, plain.userId, 'member');
      await actAs(t, owner, org.id);
      await actAs(t, plain, org.id);

      const address = uniqueEmail('by-owner');
      const created = await as(owner, 'POST', '/v1/me/organization/invitations', { email: address, role: 'member' });
      expect(created.statusCode, created.body).toBe(201);
      expect(json(await as(owner, 'GET', '/v1/me/organization/invitations')).data).toHaveLength(1);

      for (const [method, url, payload] of [
        ['POST', '/v1/me/organization/invitations', { email: uniqueEmail(), role: 'wizard' }],
        ['GET', '/v1/me/organization/invitations', undefined],
        ['POST', `/v1/me/organization/invitations/${json(created).id}/revoke`, undefined],
      ] as const) {
        const refused = await as(plain, method, url, payload);
        expect(refused.statusCode, `${method} ${url}`).toBe(403);
        expect(json(refused).error.message).toContain('org:members:manage');
      }
      const revoked = await as(owner, 'POST', `/v1/me/organization/invitations/${json(created).id}/revoke`);
      expect(json(revoked).status).toBe('revoked');
    });

    it('an admin cannot invite someone as owner (the escalation rules of adding a member)', async () => {
      const owner = await person(t, undefined, 'owner');
      const org = await createOrg(t, owner.userId);
      const admin = await person(t, undefined, 'admin');
      await addMember(t, org.id, admin.userId, 'admin');
      await actAs(t, admin, org.id);
      const refused = await as(admin, 'POST', '/v1/me/organization/invitations', { email: uniqueEmail(), role: 'owner' });
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.message).toContain('owner');
      expect((await as(admin, 'POST', '/v1/me/organization/invitations', { email: uniqueEmail(), role: 'admin' })).statusCode).toBe(201);
    });

    it('a signed-in invitee with a verified address lists and accepts; an unverified one sees nothing and is refused', async () => {
      const org = await newOrg();
      const invitee = await person(t, undefined, 'invitee');
      const invitation = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: invitee.email, role: 'member' }));

      // A password sign-up proves nothing about the address.
      expect(json(await as(invitee, 'GET', '/v1/me/invitations')).data).toEqual([]);
      const early = await as(invitee, 'POST', `/v1/me/invitations/${invitation.id}/accept`);
      expect(early.statusCode).toBe(403);
      expect(json(early).error.message).toContain('Verify your email address');

      // An email code proves it (and, the password having been set unproven, this session replaces the old ones).
      await start(t, 'email-code', { email: invitee.email });
      const code = /^(\d{6})$/m.exec((await outbox(t, invitee.email)).find((m) => m.kind === 'email_code')!.text)![1];
      const proven = await start(t, 'email-code/verify', { email: invitee.email, code });
      expect(proven.statusCode).toBe(200);
      invitee.accessToken = json(proven).session.accessToken;

      const mine = json(await as(invitee, 'GET', '/v1/me/invitations')).data;
      expect(mine).toEqual([{ ...invitation, organization: { id: org.id, name: 'Initech', slug: org.slug, imageUrl: null } }]);
      const accepted = await as(invitee, 'POST', `/v1/me/invitations/${invitation.id}/accept`);
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(json(accepted)).toMatchObject({ userId: invitee.userId, role: 'member' });
      expect(json(await as(invitee, 'GET', '/v1/me/invitations')).data).toEqual([]);
      const again = await as(invitee, 'POST', `/v1/me/invitations/${invitation.id}/accept`);
      expect(again.statusCode).toBe(409);
    });

    it('another user cannot accept an invitation that is not theirs: it is not found for them', async () => {
      const org = await newOrg();
      const intended = uniqueEmail('intended');
      const invitation = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: intended, role: 'member' }));
      const other = await person(t, undefined, 'other');
      const refused = await as(other, 'POST', `/v1/me/invitations/${invitation.id}/accept`);
      expect(refused.statusCode).toBe(404);
    });
  });

  it('adding a member by an address with no account points to invitations', async () => {
    const org = await newOrg();
    const refused = await sk('POST', `/v1/organizations/${org.id}/members`, { email: uniqueEmail('ghost'), role: 'member' });
    expect(refused.statusCode).toBe(422);
    expect(json(refused).error.message).toContain('/invitations');
  });

  it('records organizationInvitation events for created, accepted and revoked', async () => {
    const org = await newOrg();
    const address = uniqueEmail('events');
    const accepted = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: address, role: 'member' }));
    await acceptWithToken({ token: tokenFrom((await outbox(t, address))[0]!) });
    const revoked = json(await sk('POST', `/v1/organizations/${org.id}/invitations`, { email: uniqueEmail('gone'), role: 'member' }));
    await sk('POST', `/v1/organizations/${org.id}/invitations/${revoked.id}/revoke`);
    const events = await t.store.db
      .selectFrom('webhook_events')
      .select(['type', 'body'])
      .where('environment_id', '=', t.project.development.id as never)
      .where('type', 'like', 'organizationInvitation.%')
      .orderBy('id')
      .execute();
    const mine = events
      .map((e) => ({ type: e.type, data: JSON.parse(e.body).data }))
      .filter((e) => [accepted.id, revoked.id].includes(e.data.id));
    expect(mine.map((e) => `${e.type} ${e.data.id === accepted.id ? 'a' : 'r'} ${e.data.status}`)).toEqual([
      'organizationInvitation.created a pending',
      'organizationInvitation.accepted a accepted',
      'organizationInvitation.created r pending',
      'organizationInvitation.revoked r revoked',
    ]);
  });
});
