import { testEnvironmentId } from '../helpers/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeFeed, inTransaction, type Change } from '../../src/db/changes.js';
import * as identity from '../../src/identity/queries.js';
import * as organizationRoles from '../../src/organizations/role-queries.js';
import * as organizations from '../../src/organizations/queries.js';
import * as sessions from '../../src/sessions/queries.js';
import { openTestStore, testDb, type TestStore } from '../helpers/store.js';

describe(`announcing changes to cached rows (${testDb()})`, () => {
  let store: TestStore;
  let heard: Change[];
  let unsubscribe: () => void;
  beforeAll(async () => {
    store = await openTestStore();
    unsubscribe = changeFeed(store.db).subscribe((change) => heard.push(change));
  });
  afterAll(async () => {
    unsubscribe();
    await store.close();
  });

  const env = testEnvironmentId('env_changes');
  const revoke = (db: Parameters<typeof sessions.revokeSession>[0]) => sessions.revokeSession(db, env, 'sess_1', Date.now());

  it('announces a change outside a transaction at once', async () => {
    heard = [];
    await revoke(store.db);
    expect(heard).toEqual([{ kind: 'session', environmentId: env, sessionId: 'sess_1' }]);
  });

  it('announces a change made in a transaction only once it has committed', async () => {
    heard = [];
    await inTransaction(store.db, async (tx) => {
      await revoke(tx);
      await identity.updateUser(tx, env, 'user_1', { first_name: 'Ada' });
      expect(heard).toEqual([]);
    });
    expect(heard).toEqual([
      { kind: 'session', environmentId: env, sessionId: 'sess_1' },
      { kind: 'user', environmentId: env, userId: 'user_1' },
    ]);
  });

  it('never announces a change that was rolled back', async () => {
    heard = [];
    await expect(
      inTransaction(store.db, async (tx) => {
        await revoke(tx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(heard).toEqual([]);
  });

  it('refuses a change in a transaction that could not announce it', async () => {
    await expect(store.db.transaction().execute((tx) => revoke(tx))).rejects.toThrow(/inTransaction/);
  });

  it('has every writer of sessions, users, memberships, organizations and roles announce', async () => {
    const writers: [string, () => Promise<unknown>, Change][] = [
      [
        'setActiveOrganization',
        () => sessions.setActiveOrganization(store.db, env, 'sess_1', 'org_1'),
        { kind: 'session', environmentId: env, sessionId: 'sess_1' },
      ],
      [
        'clearActiveOrganization',
        () => sessions.clearActiveOrganization(store.db, env, 'sess_1', 'org_1'),
        { kind: 'session', environmentId: env, sessionId: 'sess_1' },
      ],
      ['revokeSession', () => revoke(store.db), { kind: 'session', environmentId: env, sessionId: 'sess_1' }],
      [
        'revokeUserSessions',
        () => sessions.revokeUserSessions(store, store.db, env, 'user_1', { now: Date.now(), activeSince: 0 }),
        { kind: 'user', environmentId: env, userId: 'user_1' },
      ],
      [
        'updateUser',
        () => identity.updateUser(store.db, env, 'user_1', { last_name: 'L' }),
        { kind: 'user', environmentId: env, userId: 'user_1' },
      ],
      ['deleteUser', () => identity.deleteUser(store.db, env, 'user_1'), { kind: 'user', environmentId: env, userId: 'user_1' }],
      [
        'updateOrganization',
        () => organizations.updateOrganization(store.db, env, 'org_1', { name: 'x' }),
        { kind: 'organizations', environmentId: env },
      ],
      ['deleteOrganization', () => organizations.deleteOrganization(store.db, env, 'org_1'), { kind: 'organizations', environmentId: env }],
      [
        'updateMembershipRole',
        () => organizations.updateMembershipRole(store.db, env, 'org_1', 'user_1', 'admin', Date.now()),
        { kind: 'organizations', environmentId: env, userId: 'user_1' },
      ],
      [
        'deleteMembership',
        () => organizations.deleteMembership(store.db, env, 'org_1', 'user_1'),
        { kind: 'organizations', environmentId: env, userId: 'user_1' },
      ],
      [
        'updateRole',
        () => organizationRoles.updateRole(store.db, env, 'billing', { name: 'x' }),
        { kind: 'organizations', environmentId: env },
      ],
      ['deleteRole', () => organizationRoles.deleteRole(store.db, env, 'billing'), { kind: 'organizations', environmentId: env }],
    ];
    for (const [name, write, expected] of writers) {
      heard = [];
      await write();
      expect(heard, name).toEqual([expected]);
    }
  });
});
