import type { EnvironmentId } from '../lib/ids.js';
import type { Member, Organization, User, WebhookEventType } from '@gatehouse/contract';
import { PostgresAdapter, type InsertQueryBuilder, type InsertResult, type Kysely, type Transaction } from 'kysely';
import { eventRecorded, inTransaction } from '../db/changes.js';
import type { Database, OrganizationsTable, SessionsTable } from '../db/schema.js';
import { newId } from '../lib/crypto.js';
import { eventInsert, insertEvent, type EventRow } from './queries.js';
import { sqliteTransaction, type CompiledStatement } from '../db/index.js';
import { userView } from '../identity/views.js';

/**
 * Webhook events are recorded by the writers of users, sessions, organizations and memberships, in
 * the transaction of their change (a transactional outbox): the event commits with the change or
 * not at all. The delivery worker (worker.ts) sends it afterwards.
 */

type Db = Kysely<Database> | Transaction<Database>;

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

// ---- `data`: each resource as the secret-key API shows it

/** A user as the SK API shows it. */
export const userData = userView;

/** A session as the platform shows it: never its tokens or their hashes. */
export function sessionData(row: Readonly<SessionsTable>) {
  return {
    id: row.id,
    userId: row.user_id,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    userAgent: row.user_agent,
    activeOrganizationId: row.active_organization_id,
  };
}

export function organizationData(row: Readonly<OrganizationsTable>): Organization {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    imageUrl: row.image_url,
    mfaRequired: row.mfa_required === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type MembershipData = Member & { organizationId: string };

/** The user as it stands in this transaction; undefined when there is none. */
export async function readUserData(tx: Db, environmentId: EnvironmentId, userId: string): Promise<User | undefined> {
  const row = await tx
    .selectFrom('users')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row && userData(row);
}

export async function readOrganizationData(
  tx: Db,
  environmentId: EnvironmentId,
  organizationId: string,
): Promise<Organization | undefined> {
  const row = await tx
    .selectFrom('organizations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', organizationId)
    .executeTakeFirst();
  return row && organizationData(row);
}

/** The membership as a member object of the API, plus its organization's id. */
export async function readMembershipData(
  tx: Db,
  environmentId: EnvironmentId,
  organizationId: string,
  userId: string,
): Promise<MembershipData | undefined> {
  const row = await tx
    .selectFrom('organization_members as m')
    .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 'm.environment_id').onRef('u.id', '=', 'm.user_id'))
    .select(['m.user_id', 'm.role', 'm.created_at', 'u.email', 'u.first_name', 'u.last_name', 'u.image_url'])
    .where('m.environment_id', '=', environmentId)
    .where('m.organization_id', '=', organizationId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    organizationId,
    userId: row.user_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    imageUrl: row.image_url,
    role: row.role,
    createdAt: row.created_at,
  };
}
