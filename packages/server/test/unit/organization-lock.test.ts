import { testEnvironmentId } from '../helpers/ids.js';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/index.js';
import type { Database } from '../../src/db/schema.js';
import { OrganizationAccess } from '../../src/organizations/access.js';
import { MemberService } from '../../src/organizations/member-service.js';
import { OrganizationService } from '../../src/organizations/service.js';
import { defaultSettings, type Environment } from '../../src/tenancy/settings.js';

/**
 * The organization row lock, checked without a database. The race tests
 * (test/organizations/concurrency.test.ts) catch a missing lock only on PostgreSQL: on SQLite the one
 * connection runs one transaction at a time, so two changes can never interleave and there is no
 * lock to remove (lockForUpdate leaves SQLite's query as it is). Here every change path runs against
 * a PostgreSQL compiler with no server behind it, and the statements it would send are read: each
 * must lock the organization row before it decides anything. This runs in every suite, with or
 * without PostgreSQL.
 */
function recordingStore() {
  const statements: string[] = [];
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      if (event.level === 'query') statements.push(event.query.sql);
    },
  });
  const store: Store = { db, dialect: 'postgres', close: () => db.destroy() };
  return { store, statements };
}

const environment: Environment = {
  id: testEnvironmentId('env_1'),
  projectId: 'proj_1',
  type: 'development',
  publishableKey: 'pk_test_1',
  settings: defaultSettings(),
};

function services() {
  const { store, statements } = recordingStore();
  const access = new OrganizationAccess(store);
  const identity = { findUser: async () => undefined, findUserByEmail: async () => undefined };
  const members = new MemberService({ store, access, now: Date.now, identity });
  const organizations = new OrganizationService({
    store,
    access,
    acceptImageUrl: async (_environment, url) => url,
    now: Date.now,
    identity,
    sessions: { clearActiveOrganization: async () => undefined },
  });
  return { store, statements, members, organizations };
}

const LOCKS_ORGANIZATION = /^select .* from "organizations" .*for update$/;
const SHARES_ORGANIZATION = /^select .* from "organizations" .*for share$/;
const member = { kind: 'member', userId: 'user_a' } as const;

describe('every organization change locks the organization row first', () => {
  it.each([
    [
      'removing a member (the last-owner check)',
      (s: ReturnType<typeof services>) => s.members.removeMember(environment, member, 'org_1', 'user_b'),
    ],
    [
      'changing a role (the last-owner check)',
      (s: ReturnType<typeof services>) => s.members.updateMemberRole(environment, member, 'org_1', 'user_b', 'admin'),
    ],
    [
      'adding a member',
      (s: ReturnType<typeof services>) => s.members.addMember(environment, member, 'org_1', { userId: 'user_b', role: 'member' }),
    ],
    [
      'changing the organization',
      (s: ReturnType<typeof services>) => s.organizations.updateOrganization(environment, 'org_1', { name: 'New' }),
    ],
    ['deleting the organization', (s: ReturnType<typeof services>) => s.organizations.deleteOrganization(environment, member, 'org_1')],
  ])('%s', async (_name, change) => {
    const s = services();
    // No row comes back from the dummy driver, so the change stops at "not found": after the lock.
    await expect(change(s)).rejects.toMatchObject({ code: 'not_found' });
    expect(s.statements[0]).toMatch(LOCKS_ORGANIZATION);
  });

  it('switching organization takes the shared lock, which a change waits for', async () => {
    const s = services();
    await expect(
      s.store.db.transaction().execute((tx) => s.organizations.authorizeSwitch(tx, environment, 'user_a', 'org_1', false)),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(s.statements[0]).toMatch(SHARES_ORGANIZATION);
  });

  it("deleting a user locks each of the user's organizations before counting owners", async () => {
    const s = services();
    await s.store.db.transaction().execute((tx) => s.organizations.assertUserDeletable(tx, environment, 'user_a'));
    expect(s.statements[0]).toMatch(LOCKS_ORGANIZATION);
    expect(s.statements.length).toBeGreaterThan(1);
  });
});
