import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectionSettings, migrate } from '../../src/db/index.js';
import { migrations } from '../../src/db/migrations/index.js';
import { TenancyService } from '../../src/tenancy/service.js';
import { openTestStore, tablesOf, testDb } from '../helpers/store.js';

const insertUser = (environmentId: string, tag: string) => sql`insert into users
  (environment_id, id, email, email_key, email_collision, email_verified, banned, public_metadata, private_metadata, unsafe_metadata, created_at, updated_at)
  values (${environmentId}, ${`user_${tag}`}, ${`${tag}@example.test`}, ${`${tag}@example.test`}, 0, 0, 0, '{}', '{}', '{}', 1, 1)`;

/**
 * An upgrade from the release before 0022 while the previous release still takes traffic: on
 * PostgreSQL the index on `users` is built CONCURRENTLY after the migrations commit, so a write to
 * `users` goes through while the build waits (a plain CREATE INDEX inside the migrations'
 * transaction would queue it behind its lock until the build ended).
 */
describe(`upgrading a database in use (${testDb()})`, () => {
  it.runIf(testDb() === 'postgres')(
    'writes to users go on while 0022 builds its index concurrently, and the index ends valid',
    async () => {
      const store = await openTestStore('0021_last_sign_in');
      const holder = new pg.Client(connectionSettings(process.env.DATABASE_URL!, store.schema));
      const writer = new pg.Client(connectionSettings(process.env.DATABASE_URL!, store.schema));
      try {
        const { environments } = await new TenancyService(store).createProject({ name: 'Upgrade' });
        const environmentId = environments[0]!.environment.id;
        for (let i = 0; i < 50; i++) await insertUser(environmentId, `before${i}`).execute(store.db);
        await holder.connect();
        await writer.connect();
        // The previous release, mid-request: a transaction that has written to users and not committed.
        await holder.query('begin');
        await holder.query(`update users set updated_at = 2 where environment_id = $1 and id = 'user_before0'`, [environmentId]);

        // Up to 0022: later migrations add columns to users, which waits for this holder (a brief
        // exclusive lock, not a build); what is tested here is that 0022's index build holds nothing.
        const migrating = migrate(store, store.schema, '0022_user_email_order');
        // The build has started, and waits for that transaction to end.
        const tag = randomBytes(4).toString('hex');
        for (;;) {
          const { rows } = await writer.query(
            `select 1 from pg_stat_activity where query ilike 'create index concurrently%' and wait_event_type = 'Lock' and state = 'active'`,
          );
          if (rows.length > 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        // Another request of the previous release writes to users meanwhile, and is not held.
        await writer.query(`update users set updated_at = 3 where environment_id = $1 and id = 'user_before1'`, [environmentId]);
        await writer.query(
          `insert into users (environment_id, id, email, email_key, email_collision, email_verified, banned, public_metadata, private_metadata, unsafe_metadata, created_at, updated_at)
         values ($1, $2, $3, $3, 0, 0, 0, '{}', '{}', '{}', 1, 1)`,
          [environmentId, `user_during${tag}`, `during.${tag}@example.test`],
        );
        await holder.query('commit');
        await migrating;

        const { rows } = await sql<{ name: string; valid: boolean }>`select c.relname as name, i.indisvalid as valid from pg_index i
        join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${store.schema} and c.relname in ('users_email_key_order', 'users_email_key')`.execute(store.db);
        expect(rows).toEqual([{ name: 'users_email_key_order', valid: true }]);
        // Then the rest, and a second start changes nothing.
        await migrate(store, store.schema);
        await migrate(store, store.schema);
      } finally {
        await holder.end().catch(() => undefined);
        await writer.end().catch(() => undefined);
        await store.close();
      }
    },
  );

  it('0022 on a database with users ends with the one index, on either database', async () => {
    const store = await openTestStore('0021_last_sign_in');
    try {
      const { environments } = await new TenancyService(store).createProject({ name: 'Upgrade' });
      for (let i = 0; i < 10; i++) await insertUser(environments[0]!.environment.id, `u${i}`).execute(store.db);
      await migrate(store, store.schema);
      const names =
        store.dialect === 'postgres'
          ? sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = ${store.schema} and tablename = 'users'`
          : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'users'`;
      const found = (await names.execute(store.db)).rows.map((r) => r.name);
      expect(found).toContain('users_email_key_order');
      expect(found).not.toContain('users_email_key');
    } finally {
      await store.close();
    }
  });

  it('migrations added since the last release sort after its last one (Kysely refuses one inserted before what a database has applied)', () => {
    // The last release (wave 3's first landing) shipped 26 migrations: 0001–0024, 0028 and 0029.
    const names = Object.keys(migrations).sort();
    expect(names[25]).toBe('0029_identity_link_completion');
    expect(names.slice(26).every((name) => name > '0029_identity_link_completion')).toBe(true);
  });

  it("a database the previous release migrated (up to 0029) takes this release's migrations, which come after it", async () => {
    const store = await openTestStore('0029_identity_link_completion');
    try {
      const { environments } = await new TenancyService(store).createProject({ name: 'Upgrade' });
      await insertUser(environments[0]!.environment.id, 'kept').execute(store.db);
      await migrate(store, store.schema);
      const tables = (await tablesOf(store)).map((t) => t.name);
      for (const table of ['user_totp', 'user_backup_codes', 'api_keys', 'machines']) expect(tables).toContain(table);
      const user = await store.db.selectFrom('users').select(['id', 'two_factor_enabled']).executeTakeFirstOrThrow();
      expect(user).toEqual({ id: 'user_kept', two_factor_enabled: 0 });
    } finally {
      await store.close();
    }
  });
});
