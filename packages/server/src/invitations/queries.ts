import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, InvitationRowStatus, OrganizationInvitationsTable } from '../db/schema.js';
import { atomically, recordEvent } from '../db/events.js';
import { invitationView } from './views.js';

type Db = Kysely<Database> | Transaction<Database>;
export type InvitationRow = OrganizationInvitationsTable;

/** Inserts a new invitation and records organizationInvitation.created with it. */
export async function insertInvitation(db: Db, environmentId: EnvironmentId, row: Omit<InvitationRow, 'environment_id'>, now: number) {
  await atomically(db, async (db) => {
    await db
      .insertInto('organization_invitations')
      .values({ ...row, environment_id: environmentId })
      .execute();
    await recordEvent(db, environmentId, 'organizationInvitation.created', invitationView({ ...row, environment_id: environmentId }, now));
  });
}

/** A second invitation to the same address: the pending one gets a new token, role and expiry. */
export async function refreshInvitation(
  db: Db,
  environmentId: EnvironmentId,
  invitationId: string,
  patch: Pick<
    Updateable<InvitationRow>,
    'token_hash' | 'role' | 'redirect_url' | 'inviter_user_id' | 'expires_at' | 'sent_at' | 'updated_at'
  >,
) {
  await db
    .updateTable('organization_invitations')
    .set(patch)
    .where('environment_id', '=', environmentId)
    .where('id', '=', invitationId)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * Moves a pending invitation to `status`, only if it is still pending (compare-and-set), and
 * records its event. Returns the row as changed, or undefined when it was no longer pending.
 */
export async function settleInvitation(
  db: Db,
  environmentId: EnvironmentId,
  invitationId: string,
  change: { status: Exclude<InvitationRowStatus, 'pending'>; acceptedUserId?: string; now: number },
): Promise<InvitationRow | undefined> {
  return atomically(db, async (db) => {
    const row = await db
      .updateTable('organization_invitations')
      .set({ status: change.status, accepted_user_id: change.acceptedUserId ?? null, updated_at: change.now })
      .where('environment_id', '=', environmentId)
      .where('id', '=', invitationId)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (row) {
      const type = change.status === 'accepted' ? 'organizationInvitation.accepted' : 'organizationInvitation.revoked';
      await recordEvent(db, environmentId, type, invitationView(row, change.now));
    }
    return row;
  });
}

export async function findInvitation(db: Db, environmentId: EnvironmentId, organizationId: string, invitationId: string) {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('id', '=', invitationId)
    .executeTakeFirst();
}

export async function findInvitationById(db: Db, environmentId: EnvironmentId, invitationId: string) {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', invitationId)
    .executeTakeFirst();
}

export async function findInvitationByTokenHash(db: Db, environmentId: EnvironmentId, tokenHash: string) {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function findPendingInvitation(db: Db, environmentId: EnvironmentId, organizationId: string, emailKey: string) {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('email_key', '=', emailKey)
    .where('status', '=', 'pending')
    .executeTakeFirst();
}

/** How many invitation emails the organization sent (created or refreshed) since `since`. */
export async function countInvitationsSentSince(db: Db, environmentId: EnvironmentId, organizationId: string, since: number) {
  const row = await db
    .selectFrom('organization_invitations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('sent_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Newest first; "pending" and "expired" both read rows with status pending, split by expiry. */
export async function listInvitations(
  db: Db,
  environmentId: EnvironmentId,
  organizationId: string,
  options: { status?: string | undefined; now: number; limit: number },
) {
  let query = db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.status === 'pending') query = query.where('status', '=', 'pending').where('expires_at', '>', options.now);
  else if (options.status === 'expired') query = query.where('status', '=', 'pending').where('expires_at', '<=', options.now);
  else if (options.status !== undefined) query = query.where('status', '=', options.status as InvitationRowStatus);
  return query.execute();
}

/** The live invitations addressed to an address, with their organizations. */
export async function listPendingInvitationsFor(db: Db, environmentId: EnvironmentId, emailKey: string, now: number) {
  return db
    .selectFrom('organization_invitations as i')
    .innerJoin('organizations as o', (join) =>
      join.onRef('o.environment_id', '=', 'i.environment_id').onRef('o.id', '=', 'i.organization_id'),
    )
    .selectAll('i')
    .select(['o.name as organization_name', 'o.slug as organization_slug', 'o.image_url as organization_image_url'])
    .where('i.environment_id', '=', environmentId)
    .where('i.email_key', '=', emailKey)
    .where('i.status', '=', 'pending')
    .where('i.expires_at', '>', now)
    .orderBy('i.created_at', 'desc')
    .limit(100)
    .execute();
}

/** Whether the organization ever invited the address (any status): enrolment does not invite twice. */
export async function hasAnyInvitation(db: Db, environmentId: EnvironmentId, organizationId: string, emailKey: string) {
  const row = await db
    .selectFrom('organization_invitations')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('email_key', '=', emailKey)
    .where('organization_id', '=', organizationId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
