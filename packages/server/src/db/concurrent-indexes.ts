import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Indexes on tables that may be large. On PostgreSQL a plain CREATE INDEX holds every write to the
 * table until it is built (minutes on a large `users`), and CREATE INDEX CONCURRENTLY, which does
 * not, cannot run inside a transaction, where migrations run (db/index.ts). So a migration asks for
 * such an index with `createIndexOnLargeTable`, and `buildConcurrentIndexes` builds it after the
 * migrations' transaction has committed. The rule (docs/operations.md, "Upgrades"): every index on
 * an existing table goes through here.
 */
export interface LargeTableIndex {
  /** The migration that asks for it; the index is built once that migration is applied. */
  migration: string;
  name: string;
  table: string;
  columns: string[];
  /** An index this one makes redundant, dropped (concurrently) once this one is valid. */
  replaces?: string;
}

export const LARGE_TABLE_INDEXES: readonly LargeTableIndex[] = [
  {
    migration: '0022_user_email_order',
    name: 'users_email_key_order',
    table: 'users',
    columns: ['environment_id', 'email_key', 'id'],
    replaces: 'users_email_key',
  },
];

function indexNamed(name: string): LargeTableIndex {
  const index = LARGE_TABLE_INDEXES.find((i) => i.name === name);
  if (!index) throw new Error(`${name} is not in LARGE_TABLE_INDEXES`);
  return index;
}

/**
 * In a migration: builds the index now on SQLite (one writer, an embedded database) and on an empty
 * PostgreSQL table (milliseconds, nothing to hold); otherwise leaves it to buildConcurrentIndexes.
 */
export async function createIndexOnLargeTable(db: Kysely<any>, name: string): Promise<void> {
  const index = indexNamed(name);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await sql`select 1 from ${sql.table(index.table)} limit 1`.execute(db);
    if (rows.length > 0) return;
  }
  await db.schema.createIndex(index.name).on(index.table).columns(index.columns).execute();
  if (index.replaces) await db.schema.dropIndex(index.replaces).execute();
}

/** Each named index in the connection's schema: valid, or invalid (what a failed concurrent build leaves); absent ones are missing. */
async function indexStates(db: Kysely<any>, names: string[]): Promise<Map<string, 'valid' | 'invalid'>> {
  const { rows } = await sql<{ name: string; valid: boolean }>`select c.relname as name, i.indisvalid as valid from pg_catalog.pg_index i
    join pg_catalog.pg_class c on c.oid = i.indexrelid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where c.relname in (${sql.join(names)}) and n.nspname = current_schema()`.execute(db);
  return new Map(rows.map((row) => [row.name, row.valid ? 'valid' : 'invalid']));
}

/**
 * PostgreSQL, after the migrations committed (and at every start, so a build a crash interrupted
 * is finished): builds each index of an applied migration that is missing, CONCURRENTLY, on one
 * connection outside any transaction. One node builds while the others serve: whoever does not get
 * the advisory lock leaves it (queries are correct without the index, only slower meanwhile).
 */
export async function buildConcurrentIndexes(db: Kysely<any>, applied: ReadonlySet<string>): Promise<void> {
  const wanted = LARGE_TABLE_INDEXES.filter((index) => applied.has(index.migration));
  if (wanted.length === 0) return;
  // One catalog read at every start: the indexes wanted, and those they replace.
  const states = await indexStates(
    db,
    wanted.flatMap((index) => [index.name, ...(index.replaces ? [index.replaces] : [])]),
  );
  const pending = wanted.filter((index) => states.get(index.name) !== 'valid' || (index.replaces && states.has(index.replaces)));
  if (pending.length === 0) return;
  await db.connection().execute(async (connection) => {
    const lockKey = sql`hashtext('gatehouse:large-table-indexes:' || current_schema())`;
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${lockKey}) as locked`.execute(connection);
    if (!rows[0]?.locked) return;
    try {
      for (const index of pending) {
        const state = (await indexStates(connection, [index.name])).get(index.name) ?? 'absent';
        if (state === 'invalid') await sql`drop index concurrently if exists ${sql.id(index.name)}`.execute(connection);
        if (state !== 'valid') {
          await sql`create index concurrently if not exists ${sql.id(index.name)} on ${sql.table(index.table)} (${sql.join(
            index.columns.map((c) => sql.id(c)),
          )})`.execute(connection);
        }
        if (index.replaces) await sql`drop index concurrently if exists ${sql.id(index.replaces)}`.execute(connection);
      }
    } finally {
      await sql`select pg_advisory_unlock(${lockKey})`.execute(connection);
    }
  });
}
