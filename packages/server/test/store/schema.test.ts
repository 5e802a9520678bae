import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation, migrate } from '../../src/db/index.js';
import { openTestStore, testDb, type TestStore } from '../helpers/store.js';

/** Tables that hold no tenant data, so they are keyed otherwise. */
const INSTANCE_TABLES = new Set(['instance_meta', 'projects', 'environments']);

describe(`store (${testDb()})`, () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore();
  });
  afterAll(() => store.close());

  async function tables() {
    const all = await store.db.introspection.getTables();
    return all.filter((t) => !t.name.startsWith('kysely_') && (store.schema === undefined || t.schema === store.schema));
  }

  it('re-applies migrations as a no-op', async () => {
    await migrate(store, store.schema);
    await migrate(store, store.schema);
    expect((await tables()).map((t) => t.name)).toContain('environments');
  });

  it('leads every tenant table with environment_id', async () => {
    const tenantTables = (await tables()).filter((t) => !INSTANCE_TABLES.has(t.name));
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
