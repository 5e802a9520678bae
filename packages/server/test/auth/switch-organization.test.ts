import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/changes.js';
import { deleteMembership, lockOrganization } from '../../src/organizations/queries.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, me, refresh } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, switchTo, type Person } from '../helpers/organizations.js';

const ORG_CLAIMS = ['org_id', 'org_slug', 'org_role', 'org_permissions'];

describe('POST /v1/auth/switch-organization', { timeout: 30_000 }, () => {
  let t: TestApp;
  let alice: Person;
  beforeAll(async () => {
    t = await startTestApp();
    alice = await person(t, undefined, 'alice');
  }, 60_000); // signing people up hashes passwords: slow on a busy machine
  afterAll(() => t.close());

  const claims = (who: Person) => decodeJwt(who.accessToken).payload;

  async function refreshed(who: Person) {
    const response = await refresh(t, who.refreshToken);
    expect(response.statusCode, response.body).toBe(200);
    const { session } = json(response);
    who.accessToken = session.accessToken;
    who.refreshToken = session.refreshToken;
    return claims(who);
  }

  it('acts as the organization: org_* claims, persisting across refreshes, and GET /v1/me shows it', async () => {
    const before = await me(t, alice.accessToken);
    expect(json(before).organization).toBeNull();
    for (const claim of ORG_CLAIMS) expect(claims(alice)).not.toHaveProperty(claim);

    const org = await createOrg(t, alice.userId, { name: 'Claims Co', slug: 'claims-co' });
    const oldRefresh = alice.refreshToken;
    const response = await switchTo(t, alice, org.id);
    expect(response.statusCode).toBe(200);
    expect(json(response).session).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^rt_/),
      expiresIn: 300,
      tokenType: 'Bearer',
    });
    expect(alice.refreshToken).not.toBe(oldRefresh); // it rotates like a refresh
    expect(claims(alice)).toMatchObject({
      sub: alice.userId,
      org_id: org.id,
      org_slug: 'claims-co',
      org_role: 'owner',
      org_permissions: ['org:manage', 'org:members:manage', 'org:delete'],
    });

    expect(await refreshed(alice)).toMatchObject({ org_id: org.id, org_role: 'owner' });
    expect(await refreshed(alice)).toMatchObject({ org_id: org.id, org_slug: 'claims-co' });

    const body = json(await me(t, alice.accessToken));
    expect(body.organization).toMatchObject({ id: org.id, name: 'Claims Co', slug: 'claims-co', role: 'owner', imageUrl: null });
    expect(body.organizations.map((o: { id: string }) => o.id)).toContain(org.id);

    // Claims follow live changes at the next refresh: a new slug and a new role.
    const coOwner = await plainUser(t);
    await addMember(t, org.id, coOwner.id, 'owner');
    await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}`,
      credential: t.project.development.secretKey,
      payload: { slug: 'claims-renamed' },
    });
    await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${alice.userId}`,
      credential: t.project.development.secretKey,
      payload: { role: 'admin' },
    });
    expect(await refreshed(alice)).toMatchObject({
      org_slug: 'claims-renamed',
      org_role: 'admin',
      org_permissions: ['org:manage', 'org:members:manage'],
    });

    // null switches back to no organization.
    await actAs(t, alice, null);
    for (const claim of ORG_CLAIMS) expect(claims(alice)).not.toHaveProperty(claim);
    expect(json(await me(t, alice.accessToken)).organization).toBeNull();
    expect(await refreshed(alice)).not.toHaveProperty('org_id');
  });

  it('refuses an organization the caller is not a member of (403) or that is not in this environment (404)', async () => {
    const stranger = await plainUser(t);
    const theirs = await createOrg(t, stranger.id);
    const notMember = await switchTo(t, alice, theirs.id);
    expect(notMember.statusCode).toBe(403);
    expect(json(notMember).error.code).toBe('forbidden');
    expect(json(notMember).error.message).toMatch(/not a member/);

    const prodOwner = await plainUser(t, t.project.production);
    const prodOrg = await createOrg(t, prodOwner.id, { environment: t.project.production });
    const foreign = await switchTo(t, alice, prodOrg.id);
    expect(foreign.statusCode).toBe(404);
    expect((await switchTo(t, alice, 'org_doesnotexist')).statusCode).toBe(404);

    // A refused switch does not consume the refresh token.
    expect((await refresh(t, alice.refreshToken)).statusCode).toBe(200);
  });

  it('takes a refresh token and the publishable key only; a used token is reuse', async () => {
    const org = await createOrg(t, alice.userId);
    const fresh = await person(t, undefined, 'reuse');
    await addMember(t, org.id, fresh.userId);
    const missing = await t.call({
      method: 'POST',
      url: '/v1/auth/switch-organization',
      credential: t.project.development.publishableKey,
      payload: { refreshToken: fresh.refreshToken },
    });
    expect(missing.statusCode).toBe(400);
    const sk = await t.call({
      method: 'POST',
      url: '/v1/auth/switch-organization',
      credential: t.project.development.secretKey,
      payload: { refreshToken: fresh.refreshToken, organizationId: org.id },
    });
    expect(sk.statusCode).toBe(403);
    expect((await switchTo(t, fresh, org.id, t.project.production)).statusCode).toBe(401);

    const used = fresh.refreshToken;
    await actAs(t, fresh, org.id);
    // Inside the grace window the used token yields the same successor.
    const again = await switchTo(t, { ...fresh, refreshToken: used }, org.id);
    expect(again.statusCode).toBe(200);
    expect(json(again).session.refreshToken).toBe(fresh.refreshToken);
  });

  it('clears the organization at the next refresh once the membership is gone; /v1/me/organization says so meanwhile', async () => {
    const owner = await plainUser(t);
    const org = await createOrg(t, owner.id, { name: 'Leaving Co' });
    const bob = await person(t, undefined, 'bob');
    await addMember(t, org.id, bob.userId, 'admin');
    await actAs(t, bob, org.id);
    expect(claims(bob).org_id).toBe(org.id);

    const removed = await t.call({
      method: 'DELETE',
      url: `/v1/organizations/${org.id}/members/${bob.userId}`,
      credential: t.project.development.secretKey,
    });
    expect(removed.statusCode).toBe(200);

    // The old token still carries the claims, but Gatehouse reads the live membership.
    expect(claims(bob).org_id).toBe(org.id);
    const gone = await t.call({ method: 'GET', url: '/v1/me/organization', credential: bob.accessToken });
    expect(gone.statusCode).toBe(403);
    expect(json(gone).error.code).toBe('forbidden');
    expect(json(gone).error.message).toMatch(/no longer a member[\s\S]*switch-organization/);
    const members = await t.call({ method: 'GET', url: '/v1/me/organization/members', credential: bob.accessToken });
    expect(members.statusCode).toBe(403);
    expect(json(await me(t, bob.accessToken)).organization).toBeNull();

    const next = await refreshed(bob);
    for (const claim of ORG_CLAIMS) expect(next).not.toHaveProperty(claim);
    const none = await t.call({ method: 'GET', url: '/v1/me/organization', credential: bob.accessToken });
    expect(none.statusCode).toBe(404);
    expect(json(none).error.message).toMatch(/no current organization[\s\S]*switch-organization/);
    // Joining again does not silently bring the old choice back.
    await addMember(t, org.id, bob.userId);
    expect(await refreshed(bob)).not.toHaveProperty('org_id');
  });

  it('is ordered wholly before or after a membership removal under way: the removed member is refused', async () => {
    const owner = await plainUser(t);
    const org = await createOrg(t, owner.id, { name: 'Race Co' });
    const bob = await person(t, undefined, 'bob');
    await addMember(t, org.id, bob.userId);
    const environmentId = t.project.development.id;
    let answered = false;
    let switching: ReturnType<typeof switchTo> | undefined;
    // What DELETE /v1/organizations/{id}/members/{userId} does: lock the organization, then remove.
    await inTransaction(t.store.db, async (tx) => {
      await lockOrganization(t.store, tx, environmentId, org.id);
      await deleteMembership(tx, environmentId, org.id, bob.userId);
      switching = switchTo(t, bob, org.id).finally(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The switch waits for the removal to commit (PostgreSQL: the organization's row lock; SQLite
      // runs one transaction at a time).
      expect(answered).toBe(false);
    });
    const response = await switching!;
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('forbidden');
    expect(claims(bob)).not.toHaveProperty('org_id');
  });

  it('clears a deleted organization the same way', async () => {
    const carol = await person(t, undefined, 'carol');
    const org = await createOrg(t, carol.userId, { name: 'Doomed' });
    await actAs(t, carol, org.id);
    const deleted = await t.call({ method: 'DELETE', url: '/v1/me/organization', credential: carol.accessToken });
    expect(deleted.statusCode).toBe(200);
    const gone = await t.call({ method: 'GET', url: '/v1/me/organization', credential: carol.accessToken });
    expect(gone.statusCode).toBe(404);
    expect(json(gone).error.message).toMatch(/no longer exists[\s\S]*switch-organization/);
    expect(await refreshed(carol)).not.toHaveProperty('org_id');
    expect((await t.call({ method: 'GET', url: '/v1/me/organization', credential: carol.accessToken })).statusCode).toBe(404);
  });
});
