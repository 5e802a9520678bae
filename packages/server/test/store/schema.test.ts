import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { parse } from 'pg-connection-string';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionSettings, isUniqueViolation, migrate, openStore } from '../../src/db/index.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openTestStore, tablesOf, testDb, type TestStore } from '../helpers/store.js';

/** Tables that hold no tenant data, so they are keyed otherwise. */
const INSTANCE_TABLES = new Set(['instance_meta', 'projects', 'environments', 'operator_tokens', 'operator_audit_log']);
/** SQLite's own storage of the FTS5 search index (its virtual table, users_search, does lead with environment_id). */
const FTS5_SHADOW_TABLE = /^users_search_(config|data|idx|docsize)$/;

describe(`store (${testDb()})`, () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore();
  });
  afterAll(() => store.close());

  const tables = () => tablesOf(store);

  it('re-applies migrations as a no-op', async () => {
    await migrate(store, store.schema);
    await migrate(store, store.schema);
    // Through Kysely's migrator too (a target skips the up-to-date read).
    await migrate(store, store.schema, Object.keys(migrations).sort().at(-1));
    expect((await tables()).map((t) => t.name)).toContain('environments');
  });

  it('leads every tenant table with environment_id', async () => {
    const tenantTables = (await tables()).filter((t) => !INSTANCE_TABLES.has(t.name) && !FTS5_SHADOW_TABLE.test(t.name));
    expect(tenantTables.length).toBeGreaterThan(0);
    for (const table of tenantTables) {
      expect(table.columns[0]?.name, `${table.name} must lead with environment_id`).toBe('environment_id');
    }
  });

  it('leads every tenant primary key and index with environment_id', async () => {
    if (store.dialect !== 'postgres') return;
    const { rows } = await sql<{ table: string; index: string; first: string }>`
      select t.relname as table, i.relname as index, a.attname as first
      from pg_index x
      join pg_class i on i.oid = x.indexrelid
      join pg_class t on t.oid = x.indrelid
      join pg_namespace n on n.oid = t.relnamespace
      join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
      where n.nspname = ${store.schema}`.execute(store.db);
    const tenantIndexes = rows.filter((r) => !INSTANCE_TABLES.has(r.table) && !r.table.startsWith('kysely_'));
    for (const index of tenantIndexes) {
      // Global credential look-ups by hash are the one exception: the hash is what finds the tenant.
      if (/_hash/.test(index.index) || index.first.endsWith('_hash')) continue;
      // Likewise an SSO connection's id: the IdP's browser arrives with nothing else (sso/queries.ts).
      if (index.index === 'sso_connections_id') continue;
      // And a machine's id: the token endpoint's client_id is all it has (machines/queries.ts).
      if (index.index === 'machines_id') continue;
      expect(index.first, `${index.table}.${index.index}`).toBe('environment_id');
    }
  });

  it('recognizes unique violations on both dialects', async () => {
    await store.db.insertInto('instance_meta').values({ key: 'dup', value: '1' }).execute();
    const error = await store.db
      .insertInto('instance_meta')
      .values({ key: 'dup', value: '2' })
      .execute()
      .catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(new Error('other'))).toBe(false);
  });

  it('round-trips millisecond timestamps as numbers', async () => {
    const now = Date.now();
    await store.db.insertInto('projects').values({ id: 'proj_ts', name: 'ts', created_at: now }).execute();
    const row = await store.db.selectFrom('projects').select('created_at').where('id', '=', 'proj_ts').executeTakeFirstOrThrow();
    expect(row.created_at).toBe(now);
  });

  it('rolls back a failed transaction as a whole', async () => {
    await expect(
      store.db.transaction().execute(async (tx) => {
        await tx.insertInto('projects').values({ id: 'proj_rollback', name: 'x', created_at: 1 }).execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await store.db.selectFrom('projects').select('id').where('id', '=', 'proj_rollback').executeTakeFirst()).toBeUndefined();
  });
});

describe(`migrations (${testDb()})`, () => {
  it('recognizes an up-to-date database with one read, without running the migrator', async () => {
    const store = await openTestStore();
    try {
      let statements = 0;
      const counted = {
        ...store,
        db: store.db.withPlugin({
          transformQuery: (args) => {
            statements += 1;
            return args.node;
          },
          transformResult: async (args) => args.result,
        }),
      };
      await migrate(counted, store.schema);
      // PostgreSQL reads the catalog once more: the indexes built concurrently after a migration (db/concurrent-indexes.ts).
      expect(statements).toBe(store.dialect === 'postgres' ? 2 : 1);
    } finally {
      await store.close();
    }
  });

  it('a database missing a migration older than its newest is refused, not taken as up to date', async () => {
    const store = await openTestStore();
    try {
      await sql`delete from kysely_migration where name = '0015_user_metadata'`.execute(store.db);
      await expect(migrate(store, store.schema)).rejects.toThrow(/corrupted migrations/);
    } finally {
      await store.close();
    }
  });

  it('an upgrade that fails leaves the database as it was, every migration of it undone', async () => {
    const store = await openTestStore('0020_user_external_id');
    try {
      // 0022 creates an index, then drops one this database no longer has: it fails at its second
      // statement, after 0021 added a column.
      await sql`drop index users_email_key`.execute(store.db);
      await expect(migrate(store, store.schema)).rejects.toThrow(/Migration 0022_user_email_order failed/);
      const newest = await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(store.db);
      expect(newest.rows[0]?.name).toBe('0020_user_external_id');
      const users = (await tablesOf(store)).find((table) => table.name === 'users')!;
      expect(users.columns.map((c) => c.name)).not.toContain('last_sign_in_at');
      const index =
        store.dialect === 'postgres'
          ? sql`select 1 from pg_indexes where schemaname = ${store.schema} and indexname = 'users_email_key_order'`
          : sql`select 1 from sqlite_master where type = 'index' and name = 'users_email_key_order'`;
      expect((await index.execute(store.db)).rows).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('connection settings', () => {
  it('adds the schema to the options a DATABASE_URL already carries', () => {
    const settings = connectionSettings('postgres://app@db.internal:5432/gatehouse?options=-c%20statement_timeout%3D5000', 'tenant_a');
    expect(settings).toMatchObject({ host: 'db.internal', port: '5432', database: 'gatehouse', user: 'app' });
    expect(settings.options).toBe('-c statement_timeout=5000 -c search_path=tenant_a');
    expect(settings.connectionString).toBeUndefined();
  });

  it('sets the schema alone when the URL has no options, and leaves a URL without a schema untouched', () => {
    expect(connectionSettings('postgres://app@db.internal/gatehouse', 'tenant_a').options).toBe('-c search_path=tenant_a');
    const url = 'postgres://app@db.internal/gatehouse?options=-c%20statement_timeout%3D5000';
    expect(connectionSettings(url, undefined)).toEqual({ connectionString: url });
  });

  it('keeps the schema for a socket given as ?host=, which is no WHATWG URL', () => {
    const settings = connectionSettings(
      'postgres://app@/gatehouse?host=/var/run/postgresql&options=-c%20statement_timeout%3D5000',
      'tenant_a',
    );
    expect(settings).toMatchObject({ host: '/var/run/postgresql', database: 'gatehouse' });
    expect(settings.options).toBe('-c statement_timeout=5000 -c search_path=tenant_a');
  });

  it('connects exactly where and as whom pg would have, whatever the URL looks like', () => {
    for (const url of [
      'postgres://app:p%2Fx@db/gatehouse',
      'postgres://app:p%2Fx@db/gatehouse?options=-c statement_timeout=5000',
      'postgres://app:a%zz@db/gatehouse',
      'postgres://app:%3B%3D%5B%5D%40@db:6432/gatehouse?sslmode=disable&application_name=gh',
      'postgresql:///gatehouse?host=/var/run/postgresql',
      'socket://app:pw@/var/run/postgresql?db=gatehouse',
    ]) {
      const { options, ...connection } = connectionSettings(url, 'tenant_a');
      const { options: own, ...expected } = parse(url);
      expect(connection, url).toEqual({ ...expected });
      expect(options, url).toBe(own ? `${own} -c search_path=tenant_a` : '-c search_path=tenant_a');
    }
  });
});

describe.skipIf(testDb() !== 'postgres')(
  `a DATABASE_URL with options of its own ${testDb() === 'postgres' ? '(PostgreSQL)' : '(skipped: PostgreSQL only; SQLite has no URL)'}`,
  () => {
    it('keeps those options and still works in DATABASE_SCHEMA', async () => {
      const url = new URL(process.env.DATABASE_URL!);
      url.searchParams.set('options', '-c statement_timeout=4321');
      const schema = `gh_test_${randomBytes(6).toString('hex')}`;
      const store = openStore({ databaseUrl: url.toString(), postgresSchema: schema });
      try {
        await migrate(store, schema);
        const { rows } = await sql<{ timeout: string; path: string; where: string }>`
          select current_setting('statement_timeout') as timeout, current_setting('search_path') as path,
                 (select table_schema from information_schema.tables where table_name = 'environments' and table_schema = ${schema}) as where`.execute(
          store.db,
        );
        expect(rows[0]).toEqual({ timeout: '4321ms', path: schema, where: schema });
      } finally {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
        await store.close();
      }
    });
  },
);
