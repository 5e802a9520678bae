import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, me } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, rolesOf, type Person } from '../helpers/organizations.js';

describe('/v1/me/organizations and /v1/me/organization (session)', { timeout: 30_000 }, () => {
  let t: TestApp;
  let owner: Person;
  let admin: Person;
  let member: Person;
  beforeAll(async () => {
    t = await startTestApp();
    [owner, admin, member] = [
      await person(t, undefined, 'owner'),
      await person(t, undefined, 'admin'),
      await person(t, undefined, 'member'),
    ];
  }, 60_000); // signing people up hashes passwords: slow on a busy machine
  afterAll(() => t.close());

  const as = (who: Person, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.call({ method, url, credential: who.accessToken, ...(payload === undefined ? {} : { payload }) });

  /** A fresh organization with owner, admin and member, each acting as it. */
  async function team(name = 'Team') {
    const org = await createOrg(t, owner.userId, { name });
    await addMember(t, org.id, admin.userId, 'admin');
    await addMember(t, org.id, member.userId, 'member');
    for (const who of [owner, admin, member]) await actAs(t, who, org.id);
    return org;
  }

  it('creates an organization from a session: the creator is owner; the environment can turn it off', async () => {
    const created = await as(member, 'POST', '/v1/me/organizations', { name: 'Mine' });
    expect(created.statusCode).toBe(201);
    const org = json(created);
    expect(org).toMatchObject({ id: expect.stringMatching(/^org_/), name: 'Mine', slug: 'mine', role: 'owner', imageUrl: null });
    expect(await rolesOf(t, org.id)).toEqual({ [member.userId]: 'owner' });
    // Creating does not switch the session.
    expect(json(await me(t, member.accessToken)).organizations.map((o: { id: string }) => o.id)).toContain(org.id);

    const env = t.project.development.id;
    const patched = await t.call({
      method: 'PATCH',
      url: `/v1/platform/environments/${env}`,
      credential: t.platformKey,
      payload: { usersCanCreateOrganizations: false },
    });
    expect(patched.statusCode).toBe(200);
    expect(json(patched).usersCanCreateOrganizations).toBe(false);
    const refused = await as(member, 'POST', '/v1/me/organizations', { name: 'Another' });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('forbidden');
    expect(json(refused).error.message).toMatch(/POST \/v1\/organizations/);
    // The backend still can.
    expect((await createOrg(t, member.userId, { name: 'Backend made' })).name).toBe('Backend made');
    await t.setSettings(env, { usersCanCreateOrganizations: true });
    expect((await as(member, 'POST', '/v1/me/organizations', { name: 'Again' })).statusCode).toBe(201);
    expect((await as(member, 'POST', '/v1/me/organizations', { name: 'Bad', imageUrl: 'http://x.test/a.png' })).statusCode).toBe(400);
  });

  it('lists my organizations with my role in each, paginated', async () => {
    const solo = await person(t, undefined, 'lister');
    const a = await createOrg(t, solo.userId, { name: 'First' });
    const other = await plainUser(t);
    const b = await createOrg(t, other.id, { name: 'Second' });
    await addMember(t, b.id, solo.userId, 'admin');
    const c = await createOrg(t, other.id, { name: 'Third' });
    await addMember(t, c.id, solo.userId);
    await createOrg(t, other.id, { name: 'Not mine' });

    const all = json(await as(solo, 'GET', '/v1/me/organizations'));
    expect(all.nextCursor).toBeNull();
    expect(all.data.map((o: { name: string; role: string }) => [o.name, o.role])).toEqual([
      ['First', 'owner'],
      ['Second', 'admin'],
      ['Third', 'member'],
    ]);
    expect(all.data[1].permissions).toEqual(['org:manage', 'org:members:manage']);
    expect(all.data[2].permissions).toEqual([]);

    const first = json(await as(solo, 'GET', '/v1/me/organizations?limit=2'));
    expect(first.data.map((o: { id: string }) => o.id)).toEqual([a.id, b.id]);
    const second = json(await as(solo, 'GET', `/v1/me/organizations?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`));
    expect(second.data.map((o: { id: string }) => o.id)).toEqual([c.id]);
    expect(second.nextCursor).toBeNull();
    // Another user's cursor is refused.
    expect((await as(member, 'GET', `/v1/me/organizations?cursor=${encodeURIComponent(first.nextCursor)}`)).statusCode).toBe(400);

    const body = json(await me(t, solo.accessToken));
    expect(body.organizations.map((o: { name: string }) => o.name)).toEqual(['First', 'Second', 'Third']);
    expect(body.organization).toBeNull();
  });

  it('GET /v1/me/organization is 404 with directions before any switch, then the current organization', async () => {
    const newcomer = await person(t, undefined, 'newcomer');
    const none = await as(newcomer, 'GET', '/v1/me/organization');
    expect(none.statusCode).toBe(404);
    expect(json(none).error.code).toBe('not_found');
    expect(json(none).error.message).toMatch(/no current organization[\s\S]*POST \/v1\/auth\/switch-organization/);
    for (const [method, url] of [
      ['PATCH', '/v1/me/organization'],
      ['GET', '/v1/me/organization/members'],
      ['POST', '/v1/me/organization/members'],
      ['DELETE', `/v1/me/organization/members/${newcomer.userId}`],
    ] as const) {
      const payload = method === 'PATCH' ? { name: 'x' } : method === 'POST' ? { email: owner.email } : undefined;
      expect((await as(newcomer, method, url, payload)).statusCode, `${method} ${url}`).toBe(404);
    }

    const org = await team('Current');
    const current = await as(member, 'GET', '/v1/me/organization');
    expect(current.statusCode).toBe(200);
    expect(json(current)).toEqual({
      id: org.id,
      name: 'Current',
      slug: org.slug,
      imageUrl: null,
      mfaRequired: false,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      role: 'member',
      permissions: [],
    });
  });

  it('PATCH /v1/me/organization: org:manage renames and sets an https image or null', async () => {
    const org = await team('Renamable');
    const renamed = await as(admin, 'PATCH', '/v1/me/organization', { name: 'Renamed', imageUrl: 'https://img.example.test/o.webp' });
    expect(renamed.statusCode).toBe(200);
    expect(json(renamed)).toMatchObject({ id: org.id, name: 'Renamed', imageUrl: 'https://img.example.test/o.webp', role: 'admin' });
    expect(json(await as(owner, 'PATCH', '/v1/me/organization', { imageUrl: null })).imageUrl).toBeNull();
    expect(json(await as(owner, 'PATCH', '/v1/me/organization', {})).name).toBe('Renamed'); // omitted: unchanged

    for (const imageUrl of ['http://img.example.test/o.png', 'data:image/png;base64,AAAA', 'https://user:pw@img.example.test/o.png']) {
      const refused = await as(owner, 'PATCH', '/v1/me/organization', { imageUrl });
      expect(refused.statusCode, imageUrl).toBe(400);
      expect(json(refused).error.details).toEqual({ fields: ['imageUrl'] });
    }
    expect((await as(owner, 'PATCH', '/v1/me/organization', { slug: 'nope' })).statusCode).toBe(400);

    const denied = await as(member, 'PATCH', '/v1/me/organization', { name: 'Hacked' });
    expect(denied.statusCode).toBe(403);
    expect(json(denied).error.code).toBe('forbidden');
    expect(json(denied).error.message).toMatch(/org:manage/);
    const read = await t.call({ method: 'GET', url: `/v1/organizations/${org.id}`, credential: t.project.development.secretKey });
    expect(json(read).name).toBe('Renamed');
  });

  it('manages members of the current organization', async () => {
    const org = await team('Managed');
    const list = await as(member, 'GET', '/v1/me/organization/members');
    expect(list.statusCode).toBe(200);
    expect(json(list).data.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([
      [owner.userId, 'owner'],
      [admin.userId, 'admin'],
      [member.userId, 'member'],
    ]);
    expect(json(list).data[0]).toEqual({
      userId: owner.userId,
      email: owner.email,
      firstName: null,
      lastName: null,
      imageUrl: null,
      role: 'owner',
      createdAt: expect.any(Number),
    });

    const newcomer = await plainUser(t, undefined, 'Newcomer');
    const added = await as(admin, 'POST', '/v1/me/organization/members', { email: newcomer.email, role: 'member' });
    expect(added.statusCode).toBe(201);
    expect(json(added)).toMatchObject({ userId: newcomer.id, email: newcomer.email, firstName: 'Newcomer', role: 'member' });
    expect(json(await as(member, 'GET', `/v1/me/organization/members/${newcomer.id}`)).role).toBe('member');

    const missing = await as(admin, 'POST', '/v1/me/organization/members', { email: 'ghost@example.test', role: 'member' });
    expect(missing.statusCode).toBe(422);
    expect(json(missing).error).toMatchObject({
      code: 'user_not_found',
      message: `No account with email ghost@example.test exists in this environment. Invite them instead: POST /v1/organizations/{id}/invitations (or /v1/me/organization/invitations) emails a link that creates their account and joins them.`,
    });
    expect((await as(admin, 'POST', '/v1/me/organization/members', { email: newcomer.email })).statusCode).toBe(409);
    expect((await as(admin, 'POST', '/v1/me/organization/members', { email: newcomer.email, role: 'wizard' })).statusCode).toBe(400);
    // Adding by userId is a backend capability only.
    expect((await as(admin, 'POST', '/v1/me/organization/members', { userId: newcomer.id })).statusCode).toBe(400);

    const promoted = await as(admin, 'PATCH', `/v1/me/organization/members/${newcomer.id}`, { role: 'admin' });
    expect(promoted.statusCode).toBe(200);
    expect(json(promoted)).toMatchObject({ userId: newcomer.id, role: 'admin' });
    const removed = await as(owner, 'DELETE', `/v1/me/organization/members/${newcomer.id}`);
    expect(removed.statusCode).toBe(200);
    expect(json(removed)).toEqual({ organizationId: org.id, userId: newcomer.id, removed: true });
    expect((await as(owner, 'DELETE', `/v1/me/organization/members/${newcomer.id}`)).statusCode).toBe(404);
  });

  it('lets the owner transfer ownership and then leave; the last owner cannot leave', async () => {
    const org = await team('Transfer');
    const leave = await as(owner, 'DELETE', `/v1/me/organization/members/${owner.userId}`);
    expect(leave.statusCode).toBe(403);
    expect(json(leave).error.message).toMatch(/last owner[\s\S]*transfer ownership first/);
    const demote = await as(owner, 'PATCH', `/v1/me/organization/members/${owner.userId}`, { role: 'admin' });
    expect(demote.statusCode).toBe(403);
    expect(json(demote).error.message).toMatch(/last owner[\s\S]*transfer ownership first/);

    expect((await as(owner, 'PATCH', `/v1/me/organization/members/${admin.userId}`, { role: 'owner' })).statusCode).toBe(200);
    // Two owners now: the first may step down to admin.
    expect(json(await as(owner, 'PATCH', `/v1/me/organization/members/${owner.userId}`, { role: 'admin' })).role).toBe('admin');
    expect(await rolesOf(t, org.id)).toEqual({ [owner.userId]: 'admin', [admin.userId]: 'owner', [member.userId]: 'member' });
  });

  it('deleting the current organization needs org:delete (owners only)', async () => {
    const org = await team('Deletable');
    const byAdmin = await as(admin, 'DELETE', '/v1/me/organization');
    expect(byAdmin.statusCode).toBe(403);
    expect(json(byAdmin).error.message).toMatch(/org:delete/);
    expect((await as(owner, 'DELETE', '/v1/me/organization')).statusCode).toBe(200);
    expect(
      (await t.call({ method: 'GET', url: `/v1/organizations/${org.id}`, credential: t.project.development.secretKey })).statusCode,
    ).toBe(404);
  });

  it('refuses a publishable key and a secret key', async () => {
    for (const key of [t.project.development.publishableKey, t.project.development.secretKey]) {
      const response = await t.call({ method: 'GET', url: '/v1/me/organization', credential: key });
      expect(response.statusCode).toBe(403);
      expect(json(response).error.code).toBe('credential_not_accepted');
    }
  });
});
