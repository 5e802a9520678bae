import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { addMember, createOrg, plainUser, rolesOf } from '../helpers/organizations.js';

describe('/v1/organizations (secret key)', { timeout: 30_000 }, () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp();
    sk = t.project.development.secretKey;
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>, key = sk) =>
    t.call({ method, url, credential: key, ...(payload === undefined ? {} : { payload }) });

  it('creates an organization (201, bare object) whose ownerId becomes owner', async () => {
    const owner = await plainUser(t);
    const response = await call('POST', '/v1/organizations', { name: 'Acme Rockets', ownerId: owner.id });
    expect(response.statusCode).toBe(201);
    const org = json(response);
    expect(org).toEqual({
      id: expect.stringMatching(/^org_/),
      name: 'Acme Rockets',
      slug: 'acme-rockets',
      imageUrl: null,
      mfaRequired: false,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(await rolesOf(t, org.id)).toEqual({ [owner.id]: 'owner' });
    expect(json(await call('GET', `/v1/organizations/${org.id}`))).toEqual(org);
  });

  it('generates slugs from names, validates given ones, and keeps them unique per environment', async () => {
    const owner = await plainUser(t);
    expect((await createOrg(t, owner.id, { name: 'Ünïcode & Co., Ltd.' })).slug).toBe('unicode-co-ltd');
    expect((await createOrg(t, owner.id, { name: '!!!' })).slug).toBe('org');
    // A generated slug that is taken gets a suffix; a given one that is taken is a 409.
    const again = await createOrg(t, owner.id, { name: 'Ünïcode & Co., Ltd.' });
    expect(again.slug).toMatch(/^unicode-co-ltd-[a-z0-9]+$/);
    const taken = await call('POST', '/v1/organizations', { name: 'X', slug: 'unicode-co-ltd', ownerId: owner.id });
    expect(taken.statusCode).toBe(409);
    expect(json(taken).error).toMatchObject({ code: 'conflict', details: { fields: ['slug'] } });
    for (const slug of ['Upper', 'under_score', '-lead', 'trail-', 'sp ace', 'a'.repeat(65)]) {
      const refused = await call('POST', '/v1/organizations', { name: 'X', slug, ownerId: owner.id });
      expect(refused.statusCode, slug).toBe(400);
      expect(json(refused).error.code).toBe('invalid_request');
    }
    // The same slug is free in another environment.
    const prodOwner = await plainUser(t, t.project.production);
    expect((await createOrg(t, prodOwner.id, { slug: 'unicode-co-ltd', environment: t.project.production })).slug).toBe('unicode-co-ltd');
    // Renaming to a taken slug is a 409 too.
    const renamed = await call('PATCH', `/v1/organizations/${again.id}`, { slug: 'org' });
    expect(renamed.statusCode).toBe(409);
  });

  it('refuses an ownerId that is not a user of this environment', async () => {
    const prodUser = await plainUser(t, t.project.production);
    for (const ownerId of [prodUser.id, 'user_nope']) {
      const response = await call('POST', '/v1/organizations', { name: 'Orphan', ownerId });
      expect(response.statusCode).toBe(422);
      expect(json(response).error.code).toBe('user_not_found');
    }
    expect((await call('POST', '/v1/organizations', { name: 'No owner' })).statusCode).toBe(400);
    expect((await call('POST', '/v1/organizations', { name: '   ', ownerId: prodUser.id })).statusCode).toBe(400);
  });

  it('lists newest first with tamper-checked cursors and a query filter', async () => {
    const project = await t.createProject('org listing');
    const env = project.development;
    const owner = await plainUser(t, env);
    const ids: string[] = [];
    for (const name of ['Alpha Labs', 'Beta Works', 'Gamma 100%', 'Delta Labs', 'Epsilon']) {
      ids.push((await createOrg(t, owner.id, { name, environment: env })).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await call(
        'GET',
        `/v1/organizations?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        undefined,
        env.secretKey,
      );
      expect(response.statusCode).toBe(200);
      const body = json(response);
      seen.push(...body.data.map((o: { id: string }) => o.id));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);

    const names = async (query: string) =>
      json(await call('GET', `/v1/organizations?query=${encodeURIComponent(query)}`, undefined, env.secretKey)).data.map(
        (o: { name: string }) => o.name,
      );
    expect(await names('LABS')).toEqual(['Delta Labs', 'Alpha Labs']);
    expect(await names('beta-works')).toEqual(['Beta Works']); // matches the slug
    expect(await names('%')).toEqual(['Gamma 100%']); // LIKE wildcards are literal

    const first = json(await call('GET', '/v1/organizations?limit=2', undefined, env.secretKey));
    const tampered = first.nextCursor.slice(0, -2) + (first.nextCursor.endsWith('AA') ? 'BB' : 'AA');
    expect((await call('GET', `/v1/organizations?cursor=${encodeURIComponent(tampered)}`, undefined, env.secretKey)).statusCode).toBe(400);
    // Another environment's cursor is refused, not followed.
    expect((await call('GET', `/v1/organizations?cursor=${encodeURIComponent(first.nextCursor)}`)).statusCode).toBe(400);
    expect(
      json(await call('GET', '/v1/organizations', undefined, env.secretKey)).data.every((o: { id: string }) => ids.includes(o.id)),
    ).toBe(true);
  });

  it('updates and deletes an organization; https or null image only', async () => {
    const owner = await plainUser(t);
    const org = await createOrg(t, owner.id, { name: 'Before' });
    const patched = await call('PATCH', `/v1/organizations/${org.id}`, { name: 'After', imageUrl: 'https://cdn.example.test/a.png' });
    expect(patched.statusCode).toBe(200);
    expect(json(patched)).toMatchObject({ name: 'After', slug: org.slug, imageUrl: 'https://cdn.example.test/a.png' });
    expect(json(await call('PATCH', `/v1/organizations/${org.id}`, { imageUrl: null })).imageUrl).toBeNull();
    for (const imageUrl of ['http://cdn.example.test/a.png', 'javascript:alert(1)', 'not a url']) {
      const refused = await call('PATCH', `/v1/organizations/${org.id}`, { imageUrl });
      expect(refused.statusCode, imageUrl).toBe(400);
      expect(json(refused).error.details).toEqual({ fields: ['imageUrl'] });
    }
    expect((await call('PATCH', `/v1/organizations/${org.id}`, { unknown: 1 })).statusCode).toBe(400);

    const deleted = await call('DELETE', `/v1/organizations/${org.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(json(deleted)).toEqual({ id: org.id, deleted: true });
    expect((await call('GET', `/v1/organizations/${org.id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/organizations/${org.id}`)).statusCode).toBe(404);
  });

  it('adds members by userId or email; no account is 422 with a clear message; twice is 409; unknown role is 400', async () => {
    const owner = await plainUser(t);
    const org = await createOrg(t, owner.id);
    const byId = await plainUser(t, undefined, 'Byid');
    const byEmail = await plainUser(t, undefined, 'Byemail');

    const added = await call('POST', `/v1/organizations/${org.id}/members`, { userId: byId.id, role: 'admin' });
    expect(added.statusCode).toBe(201);
    expect(json(added)).toEqual({
      userId: byId.id,
      email: byId.email,
      firstName: 'Byid',
      lastName: null,
      imageUrl: null,
      role: 'admin',
      createdAt: expect.any(Number),
    });
    const viaEmail = await call('POST', `/v1/organizations/${org.id}/members`, { email: byEmail.email });
    expect(viaEmail.statusCode).toBe(201);
    expect(json(viaEmail).role).toBe('member'); // the default

    const nobody = await call('POST', `/v1/organizations/${org.id}/members`, { email: 'nobody@example.test', role: 'member' });
    expect(nobody.statusCode).toBe(422);
    expect(json(nobody).error.code).toBe('user_not_found');
    expect(json(nobody).error.message).toBe(
      `No account with email nobody@example.test exists in this environment. Invite them instead: POST /v1/organizations/{id}/invitations (or /v1/me/organization/invitations) emails a link that creates their account and joins them.`,
    );
    const twice = await call('POST', `/v1/organizations/${org.id}/members`, { userId: byId.id, role: 'member' });
    expect(twice.statusCode).toBe(409);
    expect(json(twice).error.code).toBe('conflict');

    const other = await plainUser(t);
    const unknownRole = await call('POST', `/v1/organizations/${org.id}/members`, { userId: other.id, role: 'superuser' });
    expect(unknownRole.statusCode).toBe(400);
    expect(json(unknownRole).error.message).toMatch(/Unknown role "superuser"/);
    expect((await call('POST', `/v1/organizations/${org.id}/members`, { userId: other.id, email: other.email })).statusCode).toBe(400);
    expect((await call('POST', `/v1/organizations/${org.id}/members`, { role: 'member' })).statusCode).toBe(400);
    expect((await call('POST', `/v1/organizations/${org.id}/members`, { email: 'not an email' })).statusCode).toBe(400);

    expect(await rolesOf(t, org.id)).toEqual({ [owner.id]: 'owner', [byId.id]: 'admin', [byEmail.id]: 'member' });
  });

  it('lists members in join order with cursors bound to the organization', async () => {
    const owner = await plainUser(t);
    const org = await createOrg(t, owner.id);
    const ids = [owner.id];
    for (let i = 0; i < 4; i++) ids.push((await addMember(t, org.id, (await plainUser(t)).id)).userId);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/organizations/${org.id}/members?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const body = json(await call('GET', url));
      seen.push(...body.data.map((m: { userId: string }) => m.userId));
      cursor = body.nextCursor;
    } while (cursor && seen.length < 20);
    expect(seen).toEqual(ids);

    const other = await createOrg(t, owner.id);
    const firstPage = json(await call('GET', `/v1/organizations/${org.id}/members?limit=2`));
    const foreign = await call('GET', `/v1/organizations/${other.id}/members?cursor=${encodeURIComponent(firstPage.nextCursor)}`);
    expect(foreign.statusCode).toBe(400);
  });

  it('changes roles and removes members; the last owner can be neither demoted nor removed', async () => {
    const owner = await plainUser(t);
    const second = await plainUser(t);
    const org = await createOrg(t, owner.id);
    await addMember(t, org.id, second.id);

    const demote = await call('PATCH', `/v1/organizations/${org.id}/members/${owner.id}`, { role: 'admin' });
    expect(demote.statusCode).toBe(403);
    expect(json(demote).error.code).toBe('forbidden');
    expect(json(demote).error.message).toMatch(/last owner/);
    expect(json(demote).error.message).toMatch(/transfer ownership first/);
    const remove = await call('DELETE', `/v1/organizations/${org.id}/members/${owner.id}`);
    expect(remove.statusCode).toBe(403);
    expect(json(remove).error.message).toMatch(/last owner[\s\S]*transfer ownership first/);

    // Transfer: promote the second, then the first may go.
    const promoted = await call('PATCH', `/v1/organizations/${org.id}/members/${second.id}`, { role: 'owner' });
    expect(promoted.statusCode).toBe(200);
    expect(json(promoted)).toMatchObject({ userId: second.id, role: 'owner', email: second.email });
    const removed = await call('DELETE', `/v1/organizations/${org.id}/members/${owner.id}`);
    expect(removed.statusCode).toBe(200);
    expect(json(removed)).toEqual({ organizationId: org.id, userId: owner.id, removed: true });
    expect(await rolesOf(t, org.id)).toEqual({ [second.id]: 'owner' });

    expect((await call('PATCH', `/v1/organizations/${org.id}/members/${second.id}`, { role: 'nope' })).statusCode).toBe(400);
    expect((await call('PATCH', `/v1/organizations/${org.id}/members/${second.id}`, {})).statusCode).toBe(400);
  });

  it('answers 404 for an organization of another environment and for a user who is not a member', async () => {
    const prodOwner = await plainUser(t, t.project.production);
    const prodOrg = await createOrg(t, prodOwner.id, { environment: t.project.production });
    const devUser = await plainUser(t);
    const attempts = [
      call('GET', `/v1/organizations/${prodOrg.id}`),
      call('PATCH', `/v1/organizations/${prodOrg.id}`, { name: 'Hijacked' }),
      call('DELETE', `/v1/organizations/${prodOrg.id}`),
      call('GET', `/v1/organizations/${prodOrg.id}/members`),
      call('POST', `/v1/organizations/${prodOrg.id}/members`, { userId: devUser.id, role: 'owner' }),
      call('GET', `/v1/organizations/${prodOrg.id}/members/${prodOwner.id}`),
      call('PATCH', `/v1/organizations/${prodOrg.id}/members/${prodOwner.id}`, { role: 'member' }),
      call('DELETE', `/v1/organizations/${prodOrg.id}/members/${prodOwner.id}`),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode, response.body).toBe(404);
      expect(json(response).error.code).toBe('not_found');
    }
    expect(await rolesOf(t, prodOrg.id, t.project.production)).toEqual({ [prodOwner.id]: 'owner' });
    expect(json(await call('GET', `/v1/organizations/${prodOrg.id}`, undefined, t.project.production.secretKey)).name).toBe('Acme');

    const devOwner = await plainUser(t);
    const devOrg = await createOrg(t, devOwner.id);
    for (const response of await Promise.all([
      call('GET', `/v1/organizations/${devOrg.id}/members/${devUser.id}`),
      call('PATCH', `/v1/organizations/${devOrg.id}/members/${devUser.id}`, { role: 'admin' }),
      call('DELETE', `/v1/organizations/${devOrg.id}/members/${devUser.id}`),
      call('DELETE', `/v1/organizations/${devOrg.id}/members/user_unknown`),
    ])) {
      expect(response.statusCode, response.body).toBe(404);
    }
  });

  it('refuses to delete a user who is the last owner, naming the organizations', async () => {
    const owner = await plainUser(t);
    const coOwner = await plainUser(t);
    const solo = await createOrg(t, owner.id, { name: 'Solo Corp' });
    const shared = await createOrg(t, owner.id, { name: 'Shared Corp' });
    await addMember(t, shared.id, coOwner.id, 'owner');

    const refused = await call('DELETE', `/v1/users/${owner.id}`);
    expect(refused.statusCode).toBe(403);
    const error = json(refused).error;
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain('Solo Corp');
    expect(error.message).toContain(solo.id);
    expect(error.message).not.toContain('Shared Corp');
    expect(error.message).toMatch(/last owner[\s\S]*transfer ownership first/);
    expect((await call('GET', `/v1/users/${owner.id}`)).statusCode).toBe(200);

    await addMember(t, solo.id, coOwner.id, 'owner');
    expect((await call('DELETE', `/v1/users/${owner.id}`)).statusCode).toBe(200);
    // The deleted user's memberships went with them.
    expect(await rolesOf(t, solo.id)).toEqual({ [coOwner.id]: 'owner' });
    expect(await rolesOf(t, shared.id)).toEqual({ [coOwner.id]: 'owner' });
  });

  it('takes only the secret key', async () => {
    const pk = await call('GET', '/v1/organizations', undefined, t.project.development.publishableKey);
    expect(pk.statusCode).toBe(403);
    expect(json(pk).error.code).toBe('credential_not_accepted');
    expect((await call('GET', '/v1/organizations', undefined, t.platformKey)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: '/v1/organizations' })).statusCode).toBe(401);
  });
});
