import type { EnvironmentId } from '../lib/ids.js';
import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import { announce } from '../db/changes.js';
import { lockForShare, lockForUpdate, type Store } from '../db/index.js';
import { reusableQuery } from '../db/reusable.js';
import type { Database, OrganizationMembersTable, OrganizationsTable } from '../db/schema.js';
import { atomically, recordEvent } from '../db/events.js';
import { organizationData, readMembershipData, readOrganizationData } from './event-data.js';

type Db = Kysely<Database> | Transaction<Database>;

export type OrganizationRow = OrganizationsTable;
export type MembershipRow = OrganizationMembersTable;

/** A membership with the user's profile: what a member object shows. */
export interface MemberRow {
  user_id: string;
  role: string;
  created_at: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  image_url: string | null;
}

/** A membership with its organization: what "my organizations" shows. */
export interface UserOrganizationRow extends OrganizationRow {
  role: string;
  joined_at: number;
}

function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

// ---- organizations

export async function insertOrganization(db: Db, environmentId: EnvironmentId, org: Omit<OrganizationRow, 'environment_id'>) {
  await atomically(db, async (db) => {
    await db
      .insertInto('organizations')
      .values({ ...org, environment_id: environmentId })
      .execute();
    await recordEvent(db, environmentId, 'organization.created', organizationData({ ...org, environment_id: environmentId }));
  });
}

export async function findOrganization(db: Db, environmentId: EnvironmentId, organizationId: string) {
  return db
    .selectFrom('organizations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', organizationId)
    .executeTakeFirst();
}

/**
 * Reads the organization and, on PostgreSQL, locks its row until the transaction ends. Every
 * membership change takes this lock first, so changes to one organization's members run one at a
 * time and each sees the previous one's result (owner counts, the actor's own membership).
 */
export async function lockOrganization(store: Store, tx: Transaction<Database>, environmentId: EnvironmentId, organizationId: string) {
  return lockForUpdate(
    store,
    tx.selectFrom('organizations').selectAll().where('environment_id', '=', environmentId).where('id', '=', organizationId),
  ).executeTakeFirst();
}

/**
 * Reads the organization and, on PostgreSQL, takes a shared lock on its row until the transaction
 * ends: a membership change (lockOrganization) waits for it, and it for the change, while several
 * shared holders (sessions switching to the organization) do not wait for one another.
 */
export async function shareLockOrganization(store: Store, tx: Transaction<Database>, environmentId: EnvironmentId, organizationId: string) {
  return lockForShare(
    store,
    tx.selectFrom('organizations').select(['id', 'mfa_required']).where('environment_id', '=', environmentId).where('id', '=', organizationId),
  ).executeTakeFirst();
}

/**
 * Locks (PostgreSQL) every organization the user is a member of, in id order so that concurrent
 * callers take them in the same order. The caller holds the user row, so no membership can be added.
 */
export async function lockOrganizationsOfMember(store: Store, tx: Transaction<Database>, environmentId: EnvironmentId, userId: string) {
  if (store.dialect !== 'postgres') return;
  await tx
    .selectFrom('organizations')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('organization_members')
        .select('organization_id')
        .where('environment_id', '=', environmentId)
        .where('user_id', '=', userId),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function updateOrganization(
  db: Db,
  environmentId: EnvironmentId,
  organizationId: string,
  patch: Updateable<Omit<OrganizationRow, 'environment_id' | 'id' | 'created_at'>>,
): Promise<boolean> {
  return atomically(db, async (db) => {
    const updated = await db
      .updateTable('organizations')
      .set(patch)
      .where('environment_id', '=', environmentId)
      .where('id', '=', organizationId)
      .returningAll()
      .executeTakeFirst();
    announce(db, { kind: 'organizations', environmentId });
    if (updated) await recordEvent(db, environmentId, 'organization.updated', organizationData(updated));
    return updated !== undefined;
  });
}

/** Deletes the organization; its memberships go with it (foreign key, on delete cascade). */
export async function deleteOrganization(db: Db, environmentId: EnvironmentId, organizationId: string): Promise<boolean> {
  return atomically(db, async (db) => {
    const last = await readOrganizationData(db, environmentId, organizationId);
    const result = await db
      .deleteFrom('organizations')
      .where('environment_id', '=', environmentId)
      .where('id', '=', organizationId)
      .executeTakeFirst();
    announce(db, { kind: 'organizations', environmentId });
    const deleted = result.numDeletedRows > 0n;
    if (deleted) await recordEvent(db, environmentId, 'organization.deleted', last);
    return deleted;
  });
}

/** Newest first; `beforeId` continues a listing (ids sort by creation time). */
export async function listOrganizations(
  db: Db,
  environmentId: EnvironmentId,
  options: { limit: number; beforeId?: string | undefined; query?: string | undefined },
) {
  let query = db
    .selectFrom('organizations')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  if (options.query !== undefined) {
    const pattern = likePattern(options.query);
    query = query.where((eb) =>
      eb.or([sql<boolean>`lower(name) like ${pattern} escape '\\'`, sql<boolean>`slug like ${pattern} escape '\\'`]),
    );
  }
  return query.execute();
}

// ---- memberships

export async function findMembership(db: Db, environmentId: EnvironmentId, organizationId: string, userId: string) {
  return db
    .selectFrom('organization_members')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

function memberQuery(db: Db, environmentId: EnvironmentId, organizationId: string) {
  return db
    .selectFrom('organization_members as m')
    .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 'm.environment_id').onRef('u.id', '=', 'm.user_id'))
    .select(['m.user_id', 'm.role', 'm.created_at', 'u.email', 'u.first_name', 'u.last_name', 'u.image_url'])
    .where('m.environment_id', '=', environmentId)
    .where('m.organization_id', '=', organizationId);
}

export async function findMember(db: Db, environmentId: EnvironmentId, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  return memberQuery(db, environmentId, organizationId).where('m.user_id', '=', userId).executeTakeFirst();
}

/** Oldest membership first; `after` continues a listing. */
export async function listMembers(
  db: Db,
  environmentId: EnvironmentId,
  organizationId: string,
  options: { limit: number; after?: { createdAt: number; userId: string } | undefined },
): Promise<MemberRow[]> {
  let query = memberQuery(db, environmentId, organizationId).orderBy('m.created_at').orderBy('m.user_id').limit(options.limit);
  const after = options.after;
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('m.created_at', '>', after.createdAt),
        eb.and([eb('m.created_at', '=', after.createdAt), eb('m.user_id', '>', after.userId)]),
      ]),
    );
  }
  return query.execute();
}

export async function insertMembership(db: Db, environmentId: EnvironmentId, membership: Omit<MembershipRow, 'environment_id'>) {
  await atomically(db, async (db) => {
    await db
      .insertInto('organization_members')
      .values({ ...membership, environment_id: environmentId })
      .execute();
    announce(db, { kind: 'organizations', environmentId, userId: membership.user_id });
    const data = await readMembershipData(db, environmentId, membership.organization_id, membership.user_id);
    await recordEvent(db, environmentId, 'organizationMembership.created', data);
  });
}

export async function updateMembershipRole(
  db: Db,
  environmentId: EnvironmentId,
  organizationId: string,
  userId: string,
  role: string,
  now: number,
): Promise<boolean> {
  return atomically(db, async (db) => {
    const result = await db
      .updateTable('organization_members')
      .set({ role, updated_at: now })
      .where('environment_id', '=', environmentId)
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    announce(db, { kind: 'organizations', environmentId, userId });
    const updated = result.numUpdatedRows > 0n;
    if (updated) {
      await recordEvent(
        db,
        environmentId,
        'organizationMembership.updated',
        await readMembershipData(db, environmentId, organizationId, userId),
      );
    }
    return updated;
  });
}

export async function deleteMembership(db: Db, environmentId: EnvironmentId, organizationId: string, userId: string): Promise<boolean> {
  return atomically(db, async (db) => {
    const last = await readMembershipData(db, environmentId, organizationId, userId);
    const result = await db
      .deleteFrom('organization_members')
      .where('environment_id', '=', environmentId)
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    announce(db, { kind: 'organizations', environmentId, userId });
    const deleted = result.numDeletedRows > 0n;
    if (deleted) await recordEvent(db, environmentId, 'organizationMembership.deleted', last);
    return deleted;
  });
}

export async function countOwners(db: Db, environmentId: EnvironmentId, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function userOrganizationQuery(db: Db, environmentId: EnvironmentId, userId: string) {
  return db
    .selectFrom('organization_members as m')
    .innerJoin('organizations as o', (join) =>
      join.onRef('o.environment_id', '=', 'm.environment_id').onRef('o.id', '=', 'm.organization_id'),
    )
    .selectAll('o')
    .select(['m.role', 'm.created_at as joined_at'])
    .where('m.environment_id', '=', environmentId)
    .where('m.user_id', '=', userId);
}

/** The user's membership of one organization, with the organization. */
export async function findUserOrganization(
  db: Db,
  environmentId: EnvironmentId,
  userId: string,
  organizationId: string,
): Promise<UserOrganizationRow | undefined> {
  return userOrganizationQuery(db, environmentId, userId).where('m.organization_id', '=', organizationId).executeTakeFirst();
}

/** The user's organizations, in the order they joined; `after` continues a listing. */
export const ME_ORGANIZATIONS_LIMIT = 100;

const meOrganizationsQuery = reusableQuery(['environmentId', 'userId'] as const, (db: Kysely<Database>, p) =>
  userOrganizationQuery(db, p.environmentId, p.userId).orderBy('m.created_at').orderBy('m.organization_id').limit(ME_ORGANIZATIONS_LIMIT),
);

/** The organizations GET /v1/me lists, read on every such request, so compiled once (db/reusable.ts). */
export async function listMeOrganizations(db: Kysely<Database>, environmentId: EnvironmentId, userId: string): Promise<UserOrganizationRow[]> {
  return (await meOrganizationsQuery(db, { environmentId, userId })) as UserOrganizationRow[];
}

export async function listUserOrganizations(
  db: Db,
  environmentId: EnvironmentId,
  userId: string,
  options: { limit: number; after?: { joinedAt: number; organizationId: string } | undefined },
): Promise<UserOrganizationRow[]> {
  let query = userOrganizationQuery(db, environmentId, userId).orderBy('m.created_at').orderBy('m.organization_id').limit(options.limit);
  const after = options.after;
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('m.created_at', '>', after.joinedAt),
        eb.and([eb('m.created_at', '=', after.joinedAt), eb('m.organization_id', '>', after.organizationId)]),
      ]),
    );
  }
  return query.execute();
}

/** Organizations whose only owner is this user. */
export async function organizationsSolelyOwnedBy(db: Db, environmentId: EnvironmentId, userId: string) {
  return db
    .selectFrom('organization_members as m')
    .innerJoin('organizations as o', (join) =>
      join.onRef('o.environment_id', '=', 'm.environment_id').onRef('o.id', '=', 'm.organization_id'),
    )
    .select(['o.id', 'o.name'])
    .where('m.environment_id', '=', environmentId)
    .where('m.user_id', '=', userId)
    .where('m.role', '=', 'owner')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('organization_members as other')
            .select('other.user_id')
            .where('other.environment_id', '=', environmentId)
            .whereRef('other.organization_id', '=', 'm.organization_id')
            .where('other.role', '=', 'owner')
            .where('other.user_id', '!=', userId),
        ),
      ),
    )
    .orderBy('o.id')
    .limit(50)
    .execute();
}
