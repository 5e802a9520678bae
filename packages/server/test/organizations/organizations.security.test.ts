import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, json } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, rolesOf, type Person } from '../helpers/organizations.js';

/** Attacks on organizations: escalation, stale claims, wrong-tenant ids. */
describe('organizations security', { timeout: 30_000 }, () => {
  let t: TestApp;
  let owner: Person;
  let admin: Person;
  let member: Person;
  let other: Person;
  beforeAll(async () => {
    t = await startTestApp();
    owner = await person(t, undefined, 'owner');
    admin = await person(t, undefined, 'admin');
    member = await person(t, undefined, 'member');
    other = await person(t, undefined, 'other');
  }, 60_000); // signing people up hashes passwords: slow on a busy machine
  afterAll(() => t.close());

  const as = (who: Person, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.call({ method, url, credential: who.accessToken, ...(payload === undefined ? {} : { payload }) });

  async function team() {
    const org = await createOrg(t, owner.userId, { name: 'Secure' });
    await addMember(t, org.id, admin.userId, 'admin');
    await addMember(t, org.id, member.userId, 'member');
    await addMember(t, org.id, other.userId, 'member');
    for (const who of [owner, admin, member, other]) await actAs(t, who, org.id);
    return org;
  }

  function expectForbidden(response: { statusCode: number; body: string }, pattern?: RegExp) {
    expect(response.statusCode, response.body).toBe(403);
    expect(JSON.parse(response.body).error.code).toBe('forbidden');
    if (pattern) expect(JSON.parse(response.body).error.message).toMatch(pattern);
  }

  it('an admin cannot grant owner, by role change or by adding', async () => {
    const org = await team();
    expectForbidden(await as(admin, 'PATCH', `/v1/me/organization/members/${member.userId}`, { role: 'owner' }), /Only an owner/);
    expectForbidden(await as(admin, 'PATCH', `/v1/me/organization/members/${admin.userId}`, { role: 'owner' }), /Only an owner/);
    const outsider = await plainUser(t);
    expectForbidden(await as(admin, 'POST', '/v1/me/organization/members', { email: outsider.email, role: 'owner' }), /Only an owner/);
    // Nor change or remove an owner.
    expectForbidden(await as(admin, 'PATCH', `/v1/me/organization/members/${owner.userId}`, { role: 'member' }), /Only an owner/);
    expectForbidden(await as(admin, 'DELETE', `/v1/me/organization/members/${owner.userId}`), /Only an owner/);
    expect(await rolesOf(t, org.id)).toEqual({
      [owner.userId]: 'owner',
      [admin.userId]: 'admin',
      [member.userId]: 'member',
      [other.userId]: 'member',
    });
    // An owner can grant it.
    expect((await as(owner, 'PATCH', `/v1/me/organization/members/${admin.userId}`, { role: 'owner' })).statusCode).toBe(200);
  });

  it('a member cannot change their own role, nor manage anyone', async () => {
    const org = await team();
    for (const role of ['admin', 'owner', 'member']) {
      expectForbidden(await as(member, 'PATCH', `/v1/me/organization/members/${member.userId}`, { role }), /org:members:manage/);
    }
    expectForbidden(await as(member, 'PATCH', `/v1/me/organization/members/${other.userId}`, { role: 'admin' }), /org:members:manage/);
    const outsider = await plainUser(t);
    expectForbidden(await as(member, 'POST', '/v1/me/organization/members', { email: outsider.email }), /org:members:manage/);
    // Without the permission, an unknown email is the same 403: no probing which accounts exist.
    expectForbidden(await as(member, 'POST', '/v1/me/organization/members', { email: 'nobody@example.test' }), /org:members:manage/);
    // Nor which roles exist: an unknown role is the same 403, not a 400 listing the roles.
    expectForbidden(
      await as(member, 'POST', '/v1/me/organization/members', { email: outsider.email, role: 'no-such-role' }),
      /org:members:manage/,
    );
    expectForbidden(
      await as(member, 'PATCH', `/v1/me/organization/members/${other.userId}`, { role: 'no-such-role' }),
      /org:members:manage/,
    );
    expect((await rolesOf(t, org.id))[member.userId]).toBe('member');
  });

  it('a member cannot remove another member, but may remove themselves', async () => {
    const org = await team();
    expectForbidden(await as(member, 'DELETE', `/v1/me/organization/members/${other.userId}`), /org:members:manage/);
    expectForbidden(await as(member, 'DELETE', `/v1/me/organization/members/${admin.userId}`));
    expect((await rolesOf(t, org.id))[other.userId]).toBe('member');

    const left = await as(member, 'DELETE', `/v1/me/organization/members/${member.userId}`);
    expect(left.statusCode).toBe(200);
    expect(json(left)).toEqual({ organizationId: org.id, userId: member.userId, removed: true });
    expect(await rolesOf(t, org.id)).not.toHaveProperty(member.userId);
    // Once out, the old session can do nothing there, and says why.
    expectForbidden(await as(member, 'GET', '/v1/me/organization/members'), /no longer a member/);
  });

  it('a demoted admin with a stale token (claims still say admin) is refused member management and org updates', async () => {
    const org = await team();
    const staleToken = admin.accessToken;
    expect(decodeJwt(staleToken).payload).toMatchObject({ org_id: org.id, org_role: 'admin' });
    expect((await as(admin, 'PATCH', '/v1/me/organization', { name: 'Admin was here' })).statusCode).toBe(200);

    expect((await as(owner, 'PATCH', `/v1/me/organization/members/${admin.userId}`, { role: 'member' })).statusCode).toBe(200);
    const stale = { ...admin, accessToken: staleToken };
    expect(decodeJwt(stale.accessToken).payload.org_role).toBe('admin');

    expectForbidden(await as(stale, 'PATCH', '/v1/me/organization', { name: 'Stale admin' }), /org:manage/);
    expectForbidden(await as(stale, 'PATCH', `/v1/me/organization/members/${other.userId}`, { role: 'admin' }), /org:members:manage/);
    expectForbidden(await as(stale, 'DELETE', `/v1/me/organization/members/${other.userId}`), /org:members:manage/);
    expectForbidden(await as(stale, 'POST', '/v1/me/organization/members', { email: (await plainUser(t)).email }), /org:members:manage/);
    expectForbidden(await as(stale, 'PATCH', `/v1/me/organization/members/${admin.userId}`, { role: 'admin' }), /org:members:manage/);

    const read = await t.call({ method: 'GET', url: `/v1/organizations/${org.id}`, credential: t.project.development.secretKey });
    expect(json(read).name).toBe('Admin was here');
    expect((await rolesOf(t, org.id))[other.userId]).toBe('member');
  });

  it('acts only on the session’s own current organization: ids of other organizations are never reachable', async () => {
    const mine = await team();
    const stranger = await plainUser(t);
    const theirs = await createOrg(t, stranger.id, { name: 'Theirs' });
    const theirMember = await plainUser(t);
    await addMember(t, theirs.id, theirMember.id);

    // A userId that is not a member of the current organization is 404, even if it is a member elsewhere.
    for (const response of [
      await as(owner, 'PATCH', `/v1/me/organization/members/${theirMember.id}`, { role: 'admin' }),
      await as(owner, 'DELETE', `/v1/me/organization/members/${theirMember.id}`),
      await as(owner, 'GET', `/v1/me/organization/members/${theirMember.id}`),
      await as(owner, 'DELETE', `/v1/me/organization/members/${stranger.id}`),
    ]) {
      expect(response.statusCode, response.body).toBe(404);
      expect(json(response).error.code).toBe('not_found');
    }
    expect(await rolesOf(t, theirs.id)).toEqual({ [stranger.id]: 'owner', [theirMember.id]: 'member' });
    // Forged claims cannot point the session elsewhere: the token's signature breaks (401).
    const [h, , s] = owner.accessToken.split('.');
    const payload = { ...decodeJwt(owner.accessToken).payload, org_id: theirs.id, org_role: 'owner' };
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect((await t.call({ method: 'GET', url: '/v1/me/organization/members', credential: forged })).statusCode).toBe(401);
    expect(json(await as(owner, 'GET', '/v1/me/organization')).id).toBe(mine.id);
  });

  it('a session of another environment cannot touch this environment’s organizations', async () => {
    const org = await team();
    const prodPerson = await person(t, t.project.production, 'prod');
    const switched = await t.call({
      method: 'POST',
      url: '/v1/auth/switch-organization',
      credential: t.project.production.publishableKey,
      payload: { refreshToken: prodPerson.refreshToken, organizationId: org.id },
    });
    expect(switched.statusCode).toBe(404);
    const secret = await t.call({
      method: 'POST',
      url: `/v1/organizations/${org.id}/members`,
      credential: t.project.production.secretKey,
      payload: { userId: prodPerson.userId, role: 'owner' },
    });
    expect(secret.statusCode).toBe(404);
    expect(await rolesOf(t, org.id)).not.toHaveProperty(prodPerson.userId);
  });
});
