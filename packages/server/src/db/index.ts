import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Compilable,
  type CompiledQuery,
  type MigrationProvider,
  type MigrationResultSet,
  type SelectQueryBuilder,
} from 'kysely';
import type pg from 'pg';
import type { parse as ParseConnectionString } from 'pg-connection-string';
import { requireLazily } from '../lib/lazy.js';
import { buildConcurrentIndexes } from './concurrent-indexes.js';
import { InlineLimitsPlugin } from './inline-limits.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL: the pool, whose counts the metrics report. */
  pool?: { readonly totalCount: number; readonly idleCount: number; readonly waitingCount: number };
  close(): Promise<void>;
}

export interface StoreOptions {
  /** A postgres:// URL, or undefined for SQLite. */
  databaseUrl?: string | undefined;
  /** SQLite file; ':memory:' is allowed. */
  sqliteFile?: string;
  /** PostgreSQL schema to create and use, so test runs never collide on one database. */
  postgresSchema?: string;
}

let loadedPg: typeof pg | undefined;
/** The PostgreSQL client, loaded when a store first needs it (SQLite deployments never do). */
function postgresClient(): typeof pg {
  if (!loadedPg) {
    loadedPg = requireLazily('pg') as typeof pg;
    // int8 (bigint) columns hold millisecond timestamps, which fit a JS number exactly.
    loadedPg.types.setTypeParser(loadedPg.types.builtins.INT8, (value) => Number(value));
  }
  return loadedPg;
}

/**
 * The pool's connection settings, with `search_path` set to the schema. pg parses the URL over any
 * separate setting, so an `options` parameter in the URL would replace ours: parse it here, the way pg
 * does, and join the two. (Re-serializing the URL instead would re-encode passwords and hosts that pg
 * reads leniently.)
 */
export function connectionSettings(databaseUrl: string, schema: string | undefined): pg.PoolConfig {
  if (!schema) return { connectionString: databaseUrl };
  const { parse } = requireLazily('pg-connection-string') as { parse: typeof ParseConnectionString };
  const parsed = parse(databaseUrl);
  const searchPath = `-c search_path=${schema}`;
  return { ...(parsed as unknown as pg.PoolConfig), options: parsed.options ? `${parsed.options} ${searchPath}` : searchPath };
}

export function openStore(options: StoreOptions): Store {
  if (options.databaseUrl) {
    const schema = options.postgresSchema;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) {
      throw new Error(`Invalid PostgreSQL schema name: ${schema}`);
    }
    const pool = new (postgresClient().Pool)({ ...connectionSettings(options.databaseUrl, schema), max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', pool, close: () => db.destroy() };
  }

  const file = options.sqliteFile ?? ':memory:';
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const cached = withStatementCache(database);
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: cached }),
    plugins: [new InlineLimitsPlugin()],
  });
  sqliteHandles.set(db.getExecutor().adapter, cached);
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/** By adapter, which every copy of a Kysely instance (withPlugin, connection(), transactions) shares. */
const sqliteHandles = new WeakMap<object, SQLite.Database>();

/** Runs statements compiled by Kysely on the SQLite connection, synchronously (see sqliteTransaction). */
export interface SqliteRunner {
  /** The rows of a statement that returns some (a SELECT, or a write with RETURNING). */
  rows<Row>(query: Compilable<Row> | CompiledQuery<Row>): Row[];
  /** The number of rows a write changed. */
  changes(query: Compilable<unknown> | CompiledStatement): number;
}

/** A statement Kysely compiled earlier (for a hot statement whose SQL never changes, only its values). */
export interface CompiledStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Runs `work` as one synchronous SQLite transaction on the store's connection, which it holds
 * meanwhile; a throw rolls it back. Statements are built on the `db` it receives and compiled by
 * Kysely (so its plugins, the tenant-scope guard included, see them), or compiled once beforehand
 * on the store's own handle, which has the same plugins (db/reusable.ts). For hot writes of several
 * statements: nothing else runs between them, and no await separates BEGIN from COMMIT.
 * Undefined when `db` is not a SQLite store.
 */
export function sqliteTransaction(
  db: Kysely<Database>,
): (<T>(work: (db: Kysely<Database>, run: SqliteRunner) => T) => Promise<T>) | undefined {
  const handle = sqliteHandles.get(db.getExecutor().adapter);
  if (!handle) return undefined;
  const run: SqliteRunner = {
    rows: <Row>(query: Compilable<Row> | CompiledQuery<Row>) => {
      const compiled = 'compile' in query ? query.compile() : query;
      return handle.prepare(compiled.sql).all(compiled.parameters as unknown[]) as Row[];
    },
    changes: (query) => {
      const compiled = 'compile' in query ? query.compile() : query;
      return handle.prepare(compiled.sql).run(compiled.parameters as unknown[]).changes;
    },
  };
  // IMMEDIATE: the write lock is taken at BEGIN, so a transaction never has to upgrade a read lock
  // (which SQLite may refuse at once, without waiting, while another connection writes).
  return (work) => db.connection().execute(async (connection) => handle.transaction(() => work(connection, run)).immediate());
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every SQLite query anew, and preparing (parsing and planning the SQL) costs more
 * than running the small queries this service makes. Queries repeat with different parameters, so
 * prepared statements are kept by SQL text (least recently used evicted). Reuse is safe: Kysely runs
 * one query at a time on the single SQLite connection.
 */
function withStatementCache(database: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = database.prepare.bind(database);
  return new Proxy(database, {
    get(target, property) {
      if (property !== 'prepare') {
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (source: string) => {
        let statement = cache.get(source);
        if (statement) {
          cache.delete(source);
        } else {
          statement = prepare(source);
          if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        }
        cache.set(source, statement);
        return statement;
      };
    },
  });
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * The migrator looks for its own tables with Kysely's introspection, which reads every table of
 * every schema through functions that take names (`has_schema_privilege`, `pg_get_serial_sequence`):
 * a schema dropped meanwhile by another session makes that query fail ("schema … does not exist").
 * In a schema of its own, the migrator is shown only that schema's tables, read by plain catalog
 * columns.
 */
function withScopedIntrospection(db: Kysely<Database>, schema: string): Kysely<Database> {
  const introspection = {
    getSchemas: async () =>
      (await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db)).rows,
    getTables: async () =>
      (
        await sql<{ name: string; schema: string }>`select table_name as name, table_schema as schema
          from information_schema.tables where table_schema = ${schema}`.execute(db)
      ).rows.map((row) => ({ ...row, isView: false, columns: [] })),
    getMetadata: async () => ({ tables: [] }),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      // Kysely keeps its state in private fields: its getters and methods run on the instance itself.
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const MIGRATION_NAMES = Object.keys(migrations).sort().join('\n');

/**
 * Whether exactly the migrations this release knows are applied: one read, where Kysely's migrator
 * would introspect every table first (about 15 ms of every start). Anything else (a fresh database,
 * a pending, missing or unknown migration) goes through the migrator and its checks.
 */
async function upToDate(store: Store, postgresSchema: string | undefined): Promise<boolean> {
  const table = postgresSchema && store.dialect === 'postgres' ? sql.id(postgresSchema, 'kysely_migration') : sql.id('kysely_migration');
  try {
    const { rows } = await sql<{ name: string }>`select name from ${table}`.execute(store.db);
    const applied = rows.map((row) => row.name).sort();
    return applied.join('\n') === MIGRATION_NAMES;
  } catch {
    return false; // no migration table yet
  }
}

/**
 * This release's migrations that the database lacks (the readiness probe). Migrations of a newer
 * release are not counted: during a rolling upgrade the old nodes stay ready on the new schema.
 */
export async function missingMigrations(db: Kysely<Database>): Promise<string[]> {
  let applied: Set<string>;
  try {
    const { rows } = await sql<{ name: string }>`select name from ${sql.id('kysely_migration')}`.execute(db);
    applied = new Set(rows.map((row) => row.name));
  } catch {
    applied = new Set(); // no migration table yet
  }
  return Object.keys(migrations).filter((name) => !applied.has(name));
}

/**
 * Applies pending migrations (up to and including `upTo`, for tests of upgrades from an earlier
 * release), all in one transaction: an upgrade that fails leaves the database as it was. Safe to
 * call from several nodes or processes at once: Kysely's lock serializes them on PostgreSQL, and
 * BEGIN IMMEDIATE on SQLite (up to the busy timeout), where Kysely's lock does nothing and which it
 * would migrate statement by statement. Then, on PostgreSQL, the indexes of large tables are built
 * concurrently, outside that transaction (db/concurrent-indexes.ts).
 */
export async function migrate(store: Store, postgresSchema?: string, upTo?: string): Promise<void> {
  await migrateInTransaction(store, postgresSchema, upTo);
  if (store.dialect === 'postgres') {
    const applied = new Set(Object.keys(migrations).filter((name) => upTo === undefined || name <= upTo));
    await buildConcurrentIndexes(store.db, applied);
  }
}

async function migrateInTransaction(store: Store, postgresSchema: string | undefined, upTo: string | undefined): Promise<void> {
  if (upTo === undefined && (await upToDate(store, postgresSchema))) return;
  if (store.dialect === 'postgres' && postgresSchema) {
    await sql`create schema if not exists ${sql.id(postgresSchema)}`.execute(store.db);
  }
  const migrator = new Migrator({
    db: postgresSchema && store.dialect === 'postgres' ? withScopedIntrospection(store.db, postgresSchema) : store.db,
    provider,
    ...(postgresSchema ? { migrationTableSchema: postgresSchema } : {}),
  });
  const sqlite = store.dialect === 'sqlite' ? sqliteHandles.get(store.db.getExecutor().adapter) : undefined;
  const rollBack = () => {
    // SQLite ends the transaction itself after some errors (a full disk, an I/O error).
    if (sqlite?.inTransaction) sqlite.exec('ROLLBACK');
  };
  sqlite?.exec('BEGIN IMMEDIATE');
  let outcome: MigrationResultSet;
  try {
    outcome = upTo === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(upTo);
    if (outcome.error) rollBack();
    else sqlite?.exec('COMMIT');
  } catch (thrown) {
    rollBack();
    throw thrown;
  }
  const { error, results } = outcome;
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`);
  }
}

/**
 * Shared row lock: holders exclude `lockForUpdate` but not one another. For a transaction that
 * decides on a row it does not change (a membership check before a session write).
 */
export function lockForShare<DB, TB extends keyof DB, O>(
  store: Store,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return store.dialect === 'postgres' ? query.forShare() : query;
}

/** Row lock for read-modify-write transactions. SQLite serializes writers, so it needs none. */
export function lockForUpdate<DB, TB extends keyof DB, O>(
  store: Store,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return store.dialect === 'postgres' ? query.forUpdate() : query;
}

/** A referenced row is gone, e.g. a user deleted while a membership for them was being added. */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
