import type { EnvironmentId } from '../lib/ids.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../db/index.js';
import type { Database, OutboxStatus } from '../db/schema.js';
import { crossTenant } from '../db/tenant-scope.js';
import { newId } from '../lib/crypto.js';
import { emailKey, parseEmail } from '../identity/email.js';
import type { Environment } from '../tenancy/settings.js';
import type { EmailKind, RenderedEmail } from './templates.js';

type Db = Kysely<Database> | Transaction<Database>;

export const THROTTLE = { perAddress: 5, windowMs: 10 * 60_000 } as const;
export const CAPTURE_RETENTION = { maxAgeMs: 7 * 86_400_000, maxPerEnvironment: 1000 } as const;

export interface EnqueueInput {
  environment: Environment;
  kind: EmailKind;
  to: string;
  rendered: RenderedEmail;
  /** False when the flow must look as if it sent something but send nothing (no account, no sign-up). */
  deliver: boolean;
  /** From isThrottled(), read by the caller in the same transaction. */
  throttled: boolean;
}

/**
 * Writes one message into the outbox, inside the caller's transaction. Every path writes one row,
 * so a known and an unknown address cost the same work; what differs is only the row's status.
 */
export async function enqueueEmail(db: Db, input: EnqueueInput, now: number): Promise<OutboxStatus> {
  // Callers pass addresses that went through parseEmail; anything else is a programming error.
  const parsed = parseEmail(input.to);
  if (!('email' in parsed) || parsed.email !== input.to) throw new Error('enqueueEmail: recipient must be one canonical address');
  const environmentId = input.environment.id;

  const { throttled } = input;
  const status: OutboxStatus =
    !input.deliver || throttled ? 'suppressed' : input.environment.type === 'development' ? 'captured' : 'pending';
  // A body carries a one-time secret in clear; keep it only while someone needs to read it.
  const keepBody = status !== 'suppressed';

  await db
    .insertInto('email_outbox')
    .values({
      environment_id: environmentId,
      id: newId('msg', environmentId),
      kind: input.kind,
      to_address: input.to,
      to_key: emailKey(input.to),
      subject: input.rendered.subject,
      text_body: keepBody ? input.rendered.text : '',
      html_body: keepBody ? input.rendered.html : '',
      status,
      next_attempt_at: now,
      locked_until: null,
      last_error: throttled ? `Not sent: more than ${THROTTLE.perAddress} emails to this address in 10 minutes.` : null,
      created_at: now,
      sent_at: status === 'captured' ? now : null,
    })
    .execute();

  await pruneCaptured(db, environmentId, now);
  return status;
}

/** Whether the address, in any case, already had its share of email in the throttle window. */
export async function isThrottled(db: Db, environmentId: EnvironmentId, to: string, now: number): Promise<boolean> {
  const recent = await db
    .selectFrom('email_outbox')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('to_key', '=', emailKey(to))
    .where('created_at', '>', now - THROTTLE.windowMs)
    .where('status', '!=', 'suppressed')
    .executeTakeFirstOrThrow();
  return Number(recent.n) >= THROTTLE.perAddress;
}

/** Captured development mail is kept for 7 days, and at most the last 1,000 per environment. */
async function pruneCaptured(db: Db, environmentId: EnvironmentId, now: number): Promise<void> {
  await db
    .deleteFrom('email_outbox')
    .where('environment_id', '=', environmentId)
    .where('status', 'in', ['captured', 'suppressed'])
    .where((eb) =>
      eb.or([
        eb('created_at', '<', now - CAPTURE_RETENTION.maxAgeMs),
        eb(
          'id',
          'not in',
          eb
            .selectFrom('email_outbox as keep')
            .select('keep.id')
            .where('keep.environment_id', '=', environmentId)
            .where('keep.status', 'in', ['captured', 'suppressed'])
            .orderBy('keep.id', 'desc')
            .limit(CAPTURE_RETENTION.maxPerEnvironment),
        ),
      ]),
    )
    .execute();
}

export interface ClaimOptions {
  now: number;
  lockMs: number;
  batchSize: number;
  dialect: Dialect;
}

/**
 * Claims due messages for one worker. On PostgreSQL, `FOR UPDATE SKIP LOCKED` means two workers
 * never claim the same row; SQLite has a single writer, so the update is atomic as it stands.
 */
export async function claimDue(db: Db, options: ClaimOptions) {
  let due = db
    .selectFrom('email_outbox')
    .select(['environment_id', 'id'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', options.now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', options.now)]))
    .orderBy('next_attempt_at')
    .limit(options.batchSize)
    .modifyEnd(crossTenant("one worker delivers every environment's mail"));
  if (options.dialect === 'postgres') due = due.forUpdate().skipLocked();

  return db
    .updateTable('email_outbox')
    .set({ locked_until: options.now + options.lockMs, attempts: sql<number>`attempts + 1` })
    .where((eb) => eb(eb.refTuple('environment_id', 'id'), 'in', due.$asTuple('environment_id', 'id')))
    .returningAll()
    .modifyEnd(crossTenant("one worker delivers every environment's mail"))
    .execute();
}

export async function markSent(db: Db, environmentId: EnvironmentId, id: string, now: number) {
  await db
    .updateTable('email_outbox')
    // Delivered: the body (and the secret in it) is no longer needed.
    .set({ status: 'sent', sent_at: now, locked_until: null, last_error: null, text_body: '', html_body: '' })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .execute();
}

/**
 * Gives a claimed message back (a node shutting down): due again at once for any worker, and the
 * claim's attempt uncounted, since it was not made or its outcome is unknown. Only while the claim
 * is still this worker's.
 */
export async function releaseClaim(db: Db, environmentId: EnvironmentId, id: string, lease: number) {
  await db
    .updateTable('email_outbox')
    .set({ locked_until: null, attempts: sql<number>`attempts - 1` })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('locked_until', '=', lease)
    .execute();
}

export async function markFailedAttempt(
  db: Db,
  environmentId: EnvironmentId,
  id: string,
  update: { error: string; giveUp: boolean; nextAttemptAt: number },
) {
  await db
    .updateTable('email_outbox')
    .set({
      status: update.giveUp ? 'failed' : 'pending',
      next_attempt_at: update.nextAttemptAt,
      locked_until: null,
      last_error: update.error.slice(0, 1000),
      ...(update.giveUp ? { text_body: '', html_body: '' } : {}),
    })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .execute();
}

export interface ListEmailsOptions {
  /** The recipient's comparison key (emailKeyOf the filter as given). */
  toKey?: string | undefined;
  statuses?: OutboxStatus[];
  limit: number;
  /** Only emails older than this id (a cursor's place): ids grow with time. */
  beforeId?: string | undefined;
}

export async function listEmails(db: Db, environmentId: EnvironmentId, options: ListEmailsOptions) {
  let query = db
    .selectFrom('email_outbox')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.toKey !== undefined) query = query.where('to_key', '=', options.toKey);
  if (options.statuses) query = query.where('status', 'in', options.statuses);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  return query.execute();
}
