import { testEnvironmentId } from '../helpers/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { migrate, openStore, type Store } from '../../src/db/index.js';
import type { Database } from '../../src/db/schema.js';
import { findUser } from '../../src/identity/queries.js';
import { crossTenant, TenantScopeGuard, TenantScopeViolation } from '../../src/db/tenant-scope.js';

// The guard every test store runs its statements through (test/helpers/store.ts): these cases show
// that it refuses what would read or change another tenant's rows, and accepts what is scoped.
describe('tenant-scope guard', () => {
  let store: Store;
  let db: Kysely<Database>;
  const env = testEnvironmentId('env_a');

  beforeAll(async () => {
    store = openStore({ sqliteFile: ':memory:' });
    await migrate(store);
    db = store.db.withPlugin(new TenantScopeGuard(new Set(['users', 'sessions', 'organization_members', 'organizations'])));
  });
  afterAll(() => store.close());

  const refused = (query: { execute(): Promise<unknown> }) => expect(query.execute()).rejects.toThrow(TenantScopeViolation);

  it('refuses a read, change or delete of a tenant table with no environment condition', async () => {
    await refused(db.selectFrom('users').selectAll().where('id', '=', 'user_1'));
    await refused(db.updateTable('sessions').set({ revoked_at: 1 }).where('user_id', '=', 'user_1'));
    await refused(db.deleteFrom('users').where('email', '=', 'ada@example.test'));
  });

  it('refuses an OR whose one branch escapes the environment', async () => {
    await refused(
      db
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb.or([eb('environment_id', '=', env), eb('email', '=', 'ada@example.test')])),
    );
  });

  it('refuses environment_id compared only with another column, which pins nothing', async () => {
    await refused(db.selectFrom('users').selectAll().whereRef('users.environment_id', '=', 'users.environment_id'));
  });

  it('refuses a join of tenant tables that does not carry environment_id into the join', async () => {
    await refused(
      db
        .selectFrom('organization_members')
        .innerJoin('users', 'users.id', 'organization_members.user_id')
        .selectAll('users')
        .where('organization_members.environment_id', '=', env),
    );
  });

  it('refuses an unscoped subquery inside a scoped statement', async () => {
    await refused(
      db
        .selectFrom('users')
        .selectAll()
        .where('environment_id', '=', env)
        .where('id', 'in', (eb) => eb.selectFrom('organization_members').select('user_id').where('role', '=', 'owner')),
    );
  });

  it('accepts scoped statements, joins on environment_id, and statements marked cross-tenant', async () => {
    await db.selectFrom('users').selectAll().where('environment_id', '=', env).where('id', '=', 'user_1').execute();
    await db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb('environment_id', '=', env), eb('environment_id', 'in', [testEnvironmentId('env_b')])]))
      .execute();
    await db
      .selectFrom('organization_members')
      .innerJoin('users', (join) =>
        join.onRef('users.environment_id', '=', 'organization_members.environment_id').onRef('users.id', '=', 'organization_members.user_id'),
      )
      .selectAll('users')
      .where('organization_members.environment_id', '=', env)
      .execute();
    await db.updateTable('sessions').set({ revoked_at: 1 }).where('environment_id', '=', env).where('user_id', '=', 'u').execute();
    await db.selectFrom('users').select('id').modifyEnd(crossTenant('test: an instance-wide sweep')).execute();
    // Instance tables are not tenant data.
    await db.selectFrom('environments').selectAll().where('id', '=', env).execute();
  });

  it('does not compile a tenant query given a plain string where the environment belongs', () => {
    const fromTheRequest: string = 'env_a';
    // The unused-directive error of tsc (run by npm test) fails this file if the brand is ever lost.
    // @ts-expect-error: a string from a request is not an EnvironmentId
    const unscoped = () => findUser(db, fromTheRequest, 'user_1');
    // @ts-expect-error: nor is a user id passed in the environment's place
    const swapped = () => findUser(db, 'user_1', env);
    expect([unscoped, swapped].every((f) => typeof f === 'function')).toBe(true);
  });

  it('keeps reasons from closing their comment early', () => {
    expect(() => crossTenant('*/ drop table users; /*')).toThrow();
  });
});
