import type { EnvironmentId } from '../lib/ids.js';
import { type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { Dialect } from '../db/index.js';
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.js';
import { crossTenant } from '../db/tenant-scope.js';

type Db = Kysely<Database> | Transaction<Database>;

export type EndpointRow = WebhookEndpointsTable;
export type DeliveryRow = WebhookDeliveriesTable;

// ---- endpoints

export async function insertEndpoint(db: Db, environmentId: EnvironmentId, row: Omit<EndpointRow, 'environment_id'>) {
  await db
    .insertInto('webhook_endpoints')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

export async function findEndpoint(db: Db, environmentId: EnvironmentId, endpointId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', endpointId)
    .executeTakeFirst();
}

export async function listEndpoints(db: Db, environmentId: EnvironmentId) {
  return db.selectFrom('webhook_endpoints').selectAll().where('environment_id', '=', environmentId).orderBy('id').limit(500).execute();
}

export async function listEnabledEndpoints(db: Db, environmentId: EnvironmentId) {
  return db.selectFrom('webhook_endpoints').selectAll().where('environment_id', '=', environmentId).where('enabled', '=', 1).execute();
}

export async function updateEndpoint(
  db: Db,
  environmentId: EnvironmentId,
  endpointId: string,
  patch: Updateable<Omit<EndpointRow, 'environment_id' | 'id' | 'created_at'>>,
) {
  return db
    .updateTable('webhook_endpoints')
    .set(patch)
    .where('environment_id', '=', environmentId)
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the endpoint and its delivery log. */
export async function deleteEndpoint(db: Db, environmentId: EnvironmentId, endpointId: string): Promise<boolean> {
  await db.deleteFrom('webhook_deliveries').where('environment_id', '=', environmentId).where('endpoint_id', '=', endpointId).execute();
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('environment_id', '=', environmentId)
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

// ---- events (the outbox; written by db/events.ts)

export async function findEvent(db: Db, environmentId: EnvironmentId, eventId: string) {
  return db
    .selectFrom('webhook_events')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', eventId)
    .executeTakeFirst();
}

/**
 * Events not yet fanned out, oldest first, locked until the caller's transaction ends. On
 * PostgreSQL `SKIP LOCKED` lets several nodes fan out different events at once; SQLite has one writer.
 */
export async function claimUnfannedEvents(tx: Transaction<Database>, dialect: Dialect, limit: number) {
  let query = tx
    .selectFrom('webhook_events')
    .select(['environment_id', 'id', 'type', 'created_at'])
    .where('fanned_out', '=', 0)
    .orderBy('created_at')
    .limit(limit)
    .modifyEnd(crossTenant("one worker fans out every environment's events"));
  if (dialect === 'postgres') query = query.forUpdate().skipLocked();
  return query.execute();
}

export async function markFannedOut(db: Db, environmentId: EnvironmentId, eventId: string) {
  await db
    .updateTable('webhook_events')
    .set({ fanned_out: 1 })
    .where('environment_id', '=', environmentId)
    .where('id', '=', eventId)
    .execute();
}

/** Events no endpoint wanted: nothing will ever read them. */
export async function deleteEvents(db: Db, environmentId: EnvironmentId, eventIds: readonly string[]) {
  await db.deleteFrom('webhook_events').where('environment_id', '=', environmentId).where('id', 'in', eventIds).execute();
}

// ---- deliveries (one row per attempt)

export async function insertDelivery(db: Db, environmentId: EnvironmentId, row: Omit<Insertable<DeliveryRow>, 'environment_id'>) {
  await db
    .insertInto('webhook_deliveries')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

export async function findDelivery(db: Db, environmentId: EnvironmentId, endpointId: string, deliveryId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** The pending attempt of one message to one endpoint, if one is queued. */
export async function findPendingAttempt(db: Db, environmentId: EnvironmentId, endpointId: string, eventId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
}

export async function lastAttemptNumber(db: Db, environmentId: EnvironmentId, endpointId: string, eventId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('attempt').as('attempt'))
    .where('environment_id', '=', environmentId)
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return Number(row?.attempt ?? 0);
}

/** Newest first; `beforeId` continues a listing. */
export async function listDeliveries(
  db: Db,
  environmentId: EnvironmentId,
  endpointId: string,
  options: { limit: number; beforeId?: string | undefined },
) {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('endpoint_id', '=', endpointId)
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  return query.execute();
}

/** Of the endpoint's last `window` finished attempts, how many failed. */
export async function recentOutcomes(db: Db, environmentId: EnvironmentId, endpointId: string, window: number) {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('status')
    .where('environment_id', '=', environmentId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '!=', 'pending')
    .orderBy('id', 'desc')
    .limit(window)
    .execute();
  return { total: rows.length, failed: rows.filter((r) => r.status === 'failed').length };
}

export async function rescheduleAttempt(db: Db, environmentId: EnvironmentId, deliveryId: string, at: number) {
  return db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: at, locked_until: null })
    .where('environment_id', '=', environmentId)
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

export interface ClaimOptions {
  now: number;
  leaseMs: number;
  batchSize: number;
  dialect: Dialect;
}

/**
 * Claims due attempts for this worker with a lease: a worker that dies mid-send leaves the row
 * pending, and another claims it once the lease has run out. On PostgreSQL `FOR UPDATE SKIP LOCKED`
 * keeps two nodes from claiming one row; SQLite's single writer makes the update atomic as it stands.
 */
export async function claimDueAttempts(db: Db, options: ClaimOptions) {
  let due = db
    .selectFrom('webhook_deliveries')
    .select(['environment_id', 'id'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', options.now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', options.now)]))
    .orderBy('next_attempt_at')
    .limit(options.batchSize)
    .modifyEnd(crossTenant("one worker delivers every environment's webhooks"));
  if (options.dialect === 'postgres') due = due.forUpdate().skipLocked();
  return db
    .updateTable('webhook_deliveries')
    .set({ locked_until: options.now + options.leaseMs })
    .where((eb) => eb(eb.refTuple('environment_id', 'id'), 'in', due.$asTuple('environment_id', 'id')))
    .returningAll()
    .modifyEnd(crossTenant("one worker delivers every environment's webhooks"))
    .execute();
}

/**
 * Gives a claimed attempt back (a node shutting down): due again at once for any worker. Only while
 * the lease is this worker's; an outcome that arrives later no longer matches it and is dropped.
 */
export async function releaseAttempt(db: Db, environmentId: EnvironmentId, deliveryId: string, lease: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: null })
    .where('environment_id', '=', environmentId)
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .where('locked_until', '=', lease)
    .execute();
}

/** Records an attempt's outcome, only while this worker's lease holds (another may have taken over). */
export async function finishAttempt(
  db: Db,
  environmentId: EnvironmentId,
  deliveryId: string,
  lease: number,
  outcome: { status: 'succeeded' | 'failed'; responseStatus: number | null; error: string | null; nextAttemptAt: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: outcome.status,
      response_status: outcome.responseStatus,
      error: outcome.error === null ? null : outcome.error.slice(0, 500),
      next_attempt_at: outcome.nextAttemptAt,
      locked_until: null,
    })
    .where('environment_id', '=', environmentId)
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .where('locked_until', '=', lease)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends every queued attempt of an endpoint that no longer takes deliveries. */
export async function failPendingAttempts(db: Db, environmentId: EnvironmentId, endpointId: string, reason: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', error: reason, next_attempt_at: null, locked_until: null })
    .where('environment_id', '=', environmentId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * Forgets finished attempts and delivered events older than `before`, across environments, a batch
 * at a time. An event goes only when no attempt of it is still pending.
 */
export async function pruneBefore(db: Db, before: number, limit: number): Promise<number> {
  const attempts = await db
    .deleteFrom('webhook_deliveries')
    .where((eb) =>
      eb(
        eb.refTuple('environment_id', 'id'),
        'in',
        eb
          .selectFrom('webhook_deliveries as old')
          .select(['old.environment_id', 'old.id'])
          .where('old.status', '!=', 'pending')
          .where('old.created_at', '<', before)
          .limit(limit)
          .$asTuple('environment_id', 'id'),
      ),
    )
    .modifyEnd(crossTenant('retention applies to every environment alike'))
    .executeTakeFirst();
  const events = await db
    .deleteFrom('webhook_events')
    .where((eb) =>
      eb(
        eb.refTuple('environment_id', 'id'),
        'in',
        eb
          .selectFrom('webhook_events as old')
          .select(['old.environment_id', 'old.id'])
          .where('old.fanned_out', '=', 1)
          .where('old.created_at', '<', before)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('webhook_deliveries as d')
                  .select('d.id')
                  .whereRef('d.environment_id', '=', 'old.environment_id')
                  .whereRef('d.event_id', '=', 'old.id')
                  .where('d.status', '=', 'pending'),
              ),
            ),
          )
          .limit(limit)
          .$asTuple('environment_id', 'id'),
      ),
    )
    .modifyEnd(crossTenant('retention applies to every environment alike'))
    .executeTakeFirst();
  return Number(attempts.numDeletedRows) + Number(events.numDeletedRows);
}
