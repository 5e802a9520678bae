import type { EnvironmentId } from '../lib/ids.js';
import type { WebhookEventType } from '@gatehouse/contract';
import { PostgresAdapter, type InsertQueryBuilder, type InsertResult, type Kysely, type Transaction } from 'kysely';
import { eventRecorded, inTransaction } from './changes.js';
import type { Database } from './schema.js';
import { newId } from '../lib/crypto.js';
import { sqliteTransaction, type CompiledStatement } from './index.js';

/**
 * Webhook events are recorded by the writers of users, sessions, organizations and memberships, in
 * the transaction of their change (a transactional outbox): the event commits with the change or
 * not at all. The webhook delivery worker (webhooks/worker.ts) sends it afterwards. The outbox lives
 * here, below every domain, so that each writer records its events without knowing about webhooks;
 * what an event carries (`data`) is each domain's own (its event-data.ts).
 */

type Db = Kysely<Database> | Transaction<Database>;

export interface EventRow {
  id: string;
  type: string;
  body: string;
  createdAt: number;
}

/** The outbox row of one event. */
export function eventValues(environmentId: EnvironmentId, event: EventRow) {
  return { environment_id: environmentId, id: event.id, type: event.type, body: event.body, created_at: event.createdAt };
}

/** The insert of one event row, to run alone or as part of a larger statement (a CTE's outer insert). */
export function eventInsert(db: Pick<Db, 'insertInto'>, environmentId: EnvironmentId, event: EventRow) {
  return db.insertInto('webhook_events').values(eventValues(environmentId, event));
}

export async function insertEvent(db: Db, environmentId: EnvironmentId, event: EventRow) {
  await eventInsert(db, environmentId, event).execute();
}

/**
 * Runs a writer's statements and its event in one transaction: the caller's when it has one,
 * else a new one (opened with inTransaction, so the writer's change announcements still go out
 * after the commit).
 */
export function atomically<T>(db: Db, work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return inTransaction(db as Kysely<Database>, work);
}

/** Writes one event into the outbox. `db` must be the transaction of the change. */
export async function recordEvent(db: Db, environmentId: EnvironmentId, type: WebhookEventType, data: unknown): Promise<void> {
  if (!db.isTransaction) throw new Error(`The ${type} event must be recorded in the transaction of its change (see atomically()).`);
  await insertEvent(db, environmentId, eventRow(environmentId, type, data));
  eventRecorded(db, environmentId);
}

/**
 * Inserts one row and records its event, atomically. Outside a transaction on PostgreSQL this is a
 * single statement (the insert as a data-modifying CTE, which PostgreSQL runs to completion with the
 * outer insert or not at all): one round trip where a transaction takes four (BEGIN, two inserts,
 * COMMIT), which was most of what the outbox added to `POST /v1/users` there.
 */
export async function insertWithEvent<Table extends keyof Database>(
  db: Db,
  environmentId: EnvironmentId,
  insert: (db: Db) => InsertQueryBuilder<Database, Table, InsertResult>,
  type: WebhookEventType,
  data: unknown,
): Promise<void> {
  const event = eventRow(environmentId, type, data);
  if (!db.isTransaction && db.getExecutor().adapter instanceof PostgresAdapter) {
    await eventInsert(
      db.with('changed', () => insert(db)),
      environmentId,
      event,
    ).execute();
    eventRecorded(db, environmentId);
    return;
  }
  const sqlite = db.isTransaction ? undefined : sqliteTransaction(db as Kysely<Database>);
  if (sqlite) {
    // SQLite: both inserts in one synchronous transaction. Through Kysely's transaction each of its
    // four statements (BEGIN, two inserts, COMMIT) waits its turn for the one connection, which under
    // concurrent writes cost more than the event row itself (docs/performance.md).
    await sqlite((connection, run) => {
      run.changes(insert(connection));
      run.changes(sqliteEventInsert(connection, environmentId, event));
    });
    eventRecorded(db, environmentId);
    return;
  }
  await atomically(db, async (tx) => {
    await insert(tx).execute();
    await insertEvent(tx, environmentId, event);
    eventRecorded(tx, environmentId);
  });
}

/** The event insert's SQL on SQLite, compiled by Kysely once: only its values differ between events. */
let sqliteEventSql: string | undefined;

function sqliteEventInsert(db: Kysely<Database>, environmentId: EnvironmentId, event: EventRow): CompiledStatement {
  const parameters = [environmentId, event.id, event.type, event.body, event.createdAt];
  if (sqliteEventSql !== undefined) return { sql: sqliteEventSql, parameters };
  const compiled = eventInsert(db, environmentId, event).compile();
  // The values are bound in the order eventInsert() lists its columns; check that once.
  if (JSON.stringify(compiled.parameters) !== JSON.stringify(parameters)) throw new Error('eventInsert binds its values in another order');
  sqliteEventSql = compiled.sql;
  return compiled;
}

/** An event's outbox row: its id (the `webhook-id` of every delivery) and the exact body every attempt signs. */
export function eventRow(environmentId: EnvironmentId, type: WebhookEventType, data: unknown): EventRow {
  const at = Date.now();
  const body = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
  return { id: newId('msg', environmentId), type, body, createdAt: at };
}
