import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type CompiledQuery, type QueryExecutor, type QueryResult } from 'kysely';
import pg from 'pg';
import { migrate, openStore, type Store } from '../../src/db/index.js';
import { TenantScopeGuard } from '../../src/db/tenant-scope.js';

export type TestDb = 'sqlite' | 'postgres';

export function testDb(): TestDb {
  return process.env.GATEHOUSE_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
}

export interface TestStore extends Store {
  /** The PostgreSQL schema this store lives in, dropped on close. */
  schema: string | undefined;
}

/**
 * A fresh, migrated store. On PostgreSQL each store gets its own schema, so test files never collide
 * on the shared database; the schema is dropped on close. With `upTo`, migrated only up to and
 * including that migration, as an earlier release left it, and without the tenant-scope guard: the
 * test migrates it further, and migrations fill columns across every environment.
 */
export async function openTestStore(upTo?: string): Promise<TestStore> {
  const guard = (store: TestStore) => (upTo === undefined ? guarded(store) : store);
  if (testDb() === 'sqlite') {
    const store = openStore({ sqliteFile: ':memory:' });
    await migrate(store, undefined, upTo);
    return guard({ ...store, schema: undefined });
  }
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('GATEHOUSE_TEST_DB=postgres needs DATABASE_URL');
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const store = openStore({ databaseUrl, postgresSchema: schema });
  await migrate(store, schema, upTo);
  return guard({
    ...store,
    schema,
    async close() {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
      await store.close();
    },
  });
}

/**
 * Several stores over one database, as several nodes see it: on PostgreSQL one pool each on one
 * fresh schema, on SQLite one connection each to one WAL file. Closing the first drops the database.
 */
export async function openSharedTestStores(count = 2): Promise<TestStore[]> {
  if (testDb() === 'sqlite') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-shared-'));
    const file = path.join(dir, 'gatehouse.db');
    const first = openStore({ sqliteFile: file });
    await migrate(first);
    const others = Array.from({ length: count - 1 }, () => guarded({ ...openStore({ sqliteFile: file }), schema: undefined }));
    return [
      await guarded({
        ...first,
        schema: undefined,
        async close() {
          await first.close();
          rmSync(dir, { recursive: true, force: true });
        },
      }),
      ...(await Promise.all(others)),
    ];
  }
  const first = await openTestStore();
  const others = Array.from({ length: count - 1 }, () =>
    guarded({ ...openStore({ databaseUrl: process.env.DATABASE_URL, postgresSchema: first.schema! }), schema: first.schema }),
  );
  return [first, ...(await Promise.all(others))];
}

/**
 * Every test store runs its statements through the tenant-scope guard, so a query of a tenant table
 * without an environment condition fails whichever test reaches it. Tenant tables are read from the
 * migrated schema (every table with an environment_id column), so a new table is guarded at once.
 */
async function guarded(store: TestStore): Promise<TestStore> {
  const tables = await tablesOf(store);
  const tenantTables = new Set(tables.filter((table) => table.columns.some((c) => c.name === 'environment_id')).map((table) => table.name));
  if (tenantTables.size === 0) throw new Error('The tenant-scope guard found no tenant tables: is the store migrated?');
  return { ...store, db: store.db.withPlugin(new TenantScopeGuard(tenantTables)) };
}

/** Drops a schema a spawned server process created (DATABASE_SCHEMA); a no-op on SQLite runs. */
export async function dropPostgresSchema(schema: string): Promise<void> {
  if (testDb() !== 'postgres') return;
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** A table of the store's own schema and its columns, in order. */
export interface TableColumns {
  name: string;
  columns: { name: string }[];
}

/**
 * The store's tables (Kysely's bookkeeping left out). On PostgreSQL only the store's own schema is
 * read: Kysely's introspector reads every schema and fails when another test file drops its schema
 * at the same moment ("schema … does not exist").
 */
export async function tablesOf(store: Store & { schema: string | undefined }): Promise<TableColumns[]> {
  if (store.dialect !== 'postgres') {
    const all = await store.db.introspection.getTables();
    return all
      .filter((t) => !t.name.startsWith('kysely_'))
      .map((t) => ({ name: t.name, columns: t.columns.map((c) => ({ name: c.name })) }));
  }
  const { rows } = await sql<{ table: string; column: string }>`
    select c.relname as table, a.attname as column
    from pg_catalog.pg_attribute a
    join pg_catalog.pg_class c on c.oid = a.attrelid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${store.schema ?? 'public'} and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
    order by c.relname, a.attnum`.execute(store.db);
  const tables = new Map<string, TableColumns>();
  for (const row of rows) {
    if (row.table.startsWith('kysely_')) continue;
    let table = tables.get(row.table);
    if (!table) tables.set(row.table, (table = { name: row.table, columns: [] }));
    table.columns.push({ name: row.column });
  }
  return [...tables.values()];
}

/**
 * For a test that forces an interleaving: resolves once a connection of this database waits for a
 * row lock in a statement on the `users` table (PostgreSQL), or after `ms` (SQLite, where a
 * writer waits for the connection instead, and a PostgreSQL statement that never waits).
 */
export async function untilWaitingForUserRow(store: TestStore, ms = 500): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (store.dialect === 'postgres') {
      const { rows } = await sql<{ waiting: number }>`select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query ilike '%"users"%'`.execute(store.db);
      if (rows[0]!.waiting > 0) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Runs `run` with `hook` called after every statement of the store, outside transactions or in one
 * (`inTransaction`), with its result: to force an interleaving at a chosen statement. Transactions
 * run on executors of the root's class, so the class's method is the one replaced.
 */
export async function withQueryHook<T>(
  store: Store,
  hook: (query: CompiledQuery, result: QueryResult<unknown>, inTransaction: boolean) => Promise<void>,
  run: () => Promise<T>,
): Promise<T> {
  const root = store.db.getExecutor();
  const prototype = Object.getPrototypeOf(root) as QueryExecutor;
  const execute = prototype.executeQuery;
  prototype.executeQuery = async function <R>(this: QueryExecutor, query: CompiledQuery<R>): Promise<QueryResult<R>> {
    const result = (await execute.call(this, query)) as QueryResult<R>;
    await hook(query, result, this !== root);
    return result;
  };
  try {
    return await run();
  } finally {
    prototype.executeQuery = execute;
  }
}
