import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/changes.js';
import * as identityQueries from '../../src/identity/queries.js';
import * as organizationQueries from '../../src/organizations/queries.js';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { refresh, signUp, uniqueEmail } from '../helpers/identity.js';
import { addMember, createOrg, plainUser } from '../helpers/organizations.js';

async function events(t: TestApp, environment: TestEnvironment) {
  const rows = await t.store.db
    .selectFrom('webhook_events')
    .select(['id', 'type', 'body'])
    .where('environment_id', '=', environment.id)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, ...(JSON.parse(r.body) as { type: string; timestamp: string; data: any }) }));
}

describe('webhook events: a transactional outbox', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('a rolled-back change yields no event; a committed one yields exactly its event', async () => {
    const env = (await t.createProject('Outbox')).development;
    const user = await plainUser(t, env, 'rollback');
    const before = (await events(t, env)).length;

    await expect(
      inTransaction(t.store.db, async (tx) => {
        await identityQueries.updateUser(tx, env.id, user.id, { first_name: 'Never', updated_at: Date.now() });
        await organizationQueries.insertOrganization(tx, env.id, {
          id: 'org_rolledback',
          name: 'Never',
          slug: 'never',
          image_url: null,
          created_at: Date.now(),
          updated_at: Date.now(),
        });
        throw new Error('the change fails after its writes');
      }),
    ).rejects.toThrow('the change fails');
    expect(await events(t, env)).toHaveLength(before);

    await inTransaction(t.store.db, (tx) =>
      identityQueries.updateUser(tx, env.id, user.id, { first_name: 'Committed', updated_at: Date.now() }),
    );
    const after = await events(t, env);
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toMatchObject({ type: 'user.updated', data: { id: user.id, firstName: 'Committed' } });
  });

  it('a writer called outside a transaction records its event atomically with the change', async () => {
    const env = (await t.createProject('Outside')).development;
    const user = await plainUser(t, env, 'outside');
    await identityQueries.updateUser(t.store.db, env.id, user.id, { last_name: 'Direct', updated_at: Date.now() });
    expect((await events(t, env)).at(-1)).toMatchObject({ type: 'user.updated', data: { id: user.id, lastName: 'Direct' } });
  });

  it('an insert refused by the database records no event, in its own statement or in a transaction', async () => {
    const env = (await t.createProject('Refused insert')).development;
    const user = await plainUser(t, env, 'taken');
    const row = await t.store.db
      .selectFrom('users')
      .selectAll()
      .where('environment_id', '=', env.id)
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    const { environment_id: _, search_key: __, ...taken } = row as typeof row & { search_key?: number };
    const before = await events(t, env);

    // Same email key: the unique index refuses the user, and with it the event (on PostgreSQL both
    // are one statement outside a transaction).
    await expect(identityQueries.insertUser(t.store.db, env.id, { ...taken, id: 'user_sameaddress1' })).rejects.toThrow();
    await expect(
      inTransaction(t.store.db, (tx) => identityQueries.insertUser(tx, env.id, { ...taken, id: 'user_sameaddress2' })),
    ).rejects.toThrow();
    expect(await events(t, env)).toEqual(before);

    await identityQueries.insertUser(t.store.db, env.id, {
      ...taken,
      id: 'user_freeaddress',
      email: 'free@example.test',
      email_key: 'free@example.test',
    });
    expect((await events(t, env)).at(-1)).toMatchObject({ type: 'user.created', data: { id: 'user_freeaddress' } });
  });

  it('records every event type of users, sessions, organizations and memberships, with the resource as the API shows it', async () => {
    const env = (await t.createProject('Catalogue')).development;
    const owner = await signUp(t, { environment: env, email: uniqueEmail('owner') });
    const other = await plainUser(t, env, 'other');
    const org = await createOrg(t, owner.userId, { environment: env, name: 'Acme' });
    const patchedOrg = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}`,
      credential: env.secretKey,
      payload: { name: 'Acme 2' },
    });
    expect(patchedOrg.statusCode, patchedOrg.body).toBe(200);
    await addMember(t, org.id, other.id, 'member', env);
    const role = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${other.id}`,
      credential: env.secretKey,
      payload: { role: 'admin' },
    });
    expect(role.statusCode, role.body).toBe(200);
    const removed = await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}/members/${other.id}`, credential: env.secretKey });
    expect(removed.statusCode, removed.body).toBe(200);
    const updatedUser = await t.call({
      method: 'PATCH',
      url: `/v1/users/${other.id}`,
      credential: env.secretKey,
      payload: { firstName: 'Renamed' },
    });
    expect(updatedUser.statusCode, updatedUser.body).toBe(200);
    expect((await refresh(t, owner.refreshToken, env)).statusCode).toBe(200);
    const signOut = await t.call({
      method: 'POST',
      url: '/v1/auth/signout',
      credential: env.publishableKey,
      payload: { refreshToken: owner.refreshToken },
    });
    expect([200, 204]).toContain(signOut.statusCode);
    expect((await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}`, credential: env.secretKey })).statusCode).toBeLessThan(
      300,
    );
    expect((await t.call({ method: 'DELETE', url: `/v1/users/${other.id}`, credential: env.secretKey })).statusCode).toBeLessThan(300);

    const recorded = await events(t, env);
    const types = recorded.map((e) => e.type);
    expect(types).toEqual([
      'user.created',
      'session.created',
      'user.created',
      'organization.created',
      'organizationMembership.created',
      'organization.updated',
      'organizationMembership.created',
      'organizationMembership.updated',
      'organizationMembership.deleted',
      'user.updated',
      'session.revoked',
      'organization.deleted',
      'user.deleted',
    ]);
    const byType = (type: string) => recorded.filter((e) => e.type === type);
    for (const event of recorded) {
      expect(event.id).toMatch(/^msg_/);
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
    }
    // The user as GET /v1/users/{id} shows it.
    expect(byType('user.updated')[0]!.data).toEqual(updatedUser.json());
    expect(byType('user.deleted')[0]!.data).toMatchObject({ id: other.id, firstName: 'Renamed' });
    // The organization as the SK API shows it.
    expect(byType('organization.updated')[0]!.data).toEqual(patchedOrg.json());
    expect(byType('organization.deleted')[0]!.data).toMatchObject({ id: org.id, name: 'Acme 2' });
    // A membership: the member object plus organizationId.
    expect(byType('organizationMembership.updated')[0]!.data).toEqual({ ...role.json(), organizationId: org.id });
    expect(byType('organizationMembership.deleted')[0]!.data).toMatchObject({ organizationId: org.id, userId: other.id, role: 'admin' });
    // A session: {id, userId, createdAt, …}, never a token or its hash.
    const [created] = byType('session.created');
    expect(created!.data).toMatchObject({ id: expect.stringMatching(/^sess_/), userId: owner.userId, createdAt: expect.any(Number) });
    expect(byType('session.revoked')[0]!.data).toMatchObject({ id: created!.data.id, revokedAt: expect.any(Number) });
    const all = JSON.stringify(recorded);
    expect(all).not.toContain(owner.refreshToken);
    expect(all).not.toMatch(/refresh_hash|refreshHash|previous_hash|password_hash|passwordHash|accessToken/);
  });

  it('revoking every session of a user records one session.revoked per session', async () => {
    const env = (await t.createProject('Revoke all')).development;
    const user = await signUp(t, { environment: env, email: uniqueEmail('many') });
    const second = await t.call({
      method: 'POST',
      url: '/v1/auth/signin',
      credential: env.publishableKey,
      payload: { email: user.email, password: 'correct horse battery staple' },
    });
    expect(second.statusCode, second.body).toBe(200);
    const revoked = await t.call({ method: 'POST', url: `/v1/users/${user.userId}/sessions/revoke`, credential: env.secretKey });
    expect(revoked.statusCode, revoked.body).toBeLessThan(300);
    expect((await events(t, env)).filter((e) => e.type === 'session.revoked')).toHaveLength(2);
  });
});
