import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inTransaction } from '../../src/db/changes.js';
import type { EnvironmentId } from '../../src/lib/ids.js';
import { updateEndpoint } from '../../src/webhooks/queries.js';
import * as identityQueries from '../../src/identity/queries.js';
import * as organizationQueries from '../../src/organizations/queries.js';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { refresh, signUp, uniqueEmail } from '../helpers/identity.js';
import { addMember, createOrg, plainUser } from '../helpers/organizations.js';
import { createEndpoint, platformCall } from './receiver.js';

async function events(t: TestApp, environment: TestEnvironment) {
  const rows = await t.store.db
    .selectFrom('webhook_events')
    .select(['id', 'type', 'body'])
    .where('environment_id', '=', environment.id)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, ...(JSON.parse(r.body) as { type: string; timestamp: string; data: any }) }));
}

async function signIn(t: TestApp, environment: TestEnvironment, email: string) {
  const res = await t.call({
    method: 'POST',
    url: '/v1/auth/signin',
    credential: environment.publishableKey,
    payload: { email, password: 'correct horse battery staple' },
  });
  expect(res.statusCode, res.body).toBe(200);
}

describe('webhook events: a transactional outbox', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Sends to a closed local port fail at once; the short timeout bounds them if something listens there.
    t = await startTestApp({ webhooks: { timeoutMs: 2000 } });
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
          mfa_required: 0,
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

  it('stores every event, with or without an endpoint: a committed change always has its event', async () => {
    const env = (await t.createProject('Unheard')).development;
    const user = await signUp(t, { environment: env, email: uniqueEmail('unheard') });
    await signIn(t, env, user.email);
    expect((await events(t, env)).map((e) => e.type)).toEqual(['user.created', 'session.created', 'session.created']);
  });

  it("wakes the worker for an environment's commits unless a fan-out of its last ten polls found no enabled endpoint", async () => {
    const env = (await t.createProject('Quiet')).development;
    const worker = t.app.webhooks;
    const wake = vi.spyOn(worker, 'wake');
    try {
      // Unknown to this node's worker: a commit wakes it, and its fan-out learns there is no endpoint.
      const user = await signUp(t, { environment: env, email: uniqueEmail('quiet') });
      expect(wake).toHaveBeenCalled();
      await worker.drain();
      expect(await events(t, env)).toEqual([]);

      wake.mockClear();
      await signIn(t, env, user.email);
      expect(wake).not.toHaveBeenCalled();
      // Stored all the same; the next run (a poll) drops it.
      expect((await events(t, env)).map((e) => e.type)).toEqual(['session.created']);
      await worker.drain();

      // An endpoint enabled on another node (here: straight in the database) is found by the next poll's fan-out.
      const endpoint = await createEndpoint(t, env.id, { url: 'http://localhost:9/hooks' });
      const disabled = await platformCall(t, 'PATCH', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}`, {
        enabled: false,
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      await signIn(t, env, user.email);
      await worker.drain();
      wake.mockClear();
      await updateEndpoint(t.store.db, env.id as EnvironmentId, endpoint.id, { enabled: 1 });
      await signIn(t, env, user.email);
      expect(wake).not.toHaveBeenCalled();
      await worker.runOnce();
      await signIn(t, env, user.email);
      expect(wake).toHaveBeenCalledTimes(1);

      // One created or changed on this node wakes it at once: another environment, first quiet.
      const other = (await t.createProject('Quiet, then heard')).development;
      const second = await signUp(t, { environment: other, email: uniqueEmail('heard') });
      await worker.drain();
      wake.mockClear();
      await signIn(t, other, second.email);
      expect(wake).not.toHaveBeenCalled();
      await createEndpoint(t, other.id, { url: 'http://localhost:9/hooks' });
      await signIn(t, other, second.email);
      expect(wake).toHaveBeenCalledTimes(1);
    } finally {
      wake.mockRestore();
    }
  });

  it('trusts a quiet environment for ten polls only: then its commits wake the worker again', async () => {
    const env = (await t.createProject('Quiet for a while')).development;
    const worker = t.app.webhooks;
    const wake = vi.spyOn(worker, 'wake');
    try {
      const user = await signUp(t, { environment: env, email: uniqueEmail('hint') });
      await worker.drain();
      for (let polls = 0; polls < 8; polls++) await worker.runOnce();
      wake.mockClear();
      await signIn(t, env, user.email);
      expect(wake).not.toHaveBeenCalled();

      await worker.drain();
      for (let polls = 0; polls < 10; polls++) await worker.runOnce();
      await signIn(t, env, user.email);
      expect(wake).toHaveBeenCalledTimes(1);
    } finally {
      wake.mockRestore();
    }
  });
});
