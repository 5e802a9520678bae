import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, MembershipRequestStatus, OrganizationDomainsTable, OrganizationMembershipRequestsTable } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;
export type DomainRow = OrganizationDomainsTable;
export type RequestRow = OrganizationMembershipRequestsTable;

export async function insertDomain(db: Db, environmentId: EnvironmentId, row: Omit<DomainRow, 'environment_id'>) {
  await db
    .insertInto('organization_domains')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

export async function updateDomain(
  db: Db,
  environmentId: EnvironmentId,
  domainId: string,
  patch: Updateable<Omit<DomainRow, 'environment_id' | 'id' | 'organization_id' | 'created_at'>>,
) {
  await db.updateTable('organization_domains').set(patch).where('environment_id', '=', environmentId).where('id', '=', domainId).execute();
}

export async function deleteDomain(db: Db, environmentId: EnvironmentId, domainId: string) {
  await db.deleteFrom('organization_domains').where('environment_id', '=', environmentId).where('id', '=', domainId).execute();
}

export async function findDomain(db: Db, environmentId: EnvironmentId, organizationId: string, domainId: string) {
  return db
    .selectFrom('organization_domains')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('id', '=', domainId)
    .executeTakeFirst();
}

export async function findDomainByName(db: Db, environmentId: EnvironmentId, organizationId: string, name: string) {
  return db
    .selectFrom('organization_domains')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function listDomains(db: Db, environmentId: EnvironmentId, organizationId: string) {
  return db
    .selectFrom('organization_domains')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('organization_id', '=', organizationId)
    .orderBy('name')
    .execute();
}

/** The verified domains of any organization of the environment that enrol users of `name`. */
export async function enrollingDomains(db: Db, environmentId: EnvironmentId, name: string) {
  return db
    .selectFrom('organization_domains')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('name', '=', name)
    .where('verified', '=', 1)
    .where('enrollment_mode', '!=', 'manual_invitation')
    .execute();
}

export async function insertRequest(db: Db, environmentId: EnvironmentId, row: Omit<RequestRow, 'environment_id'>) {
  await db
    .insertInto('organization_membership_requests')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

/** Moves a request from one status to the next, only if it is still in `from` (compare-and-set). */
export async function moveRequest(
  db: Db,
  environmentId: EnvironmentId,
  requestId: string,
  from: MembershipRequestStatus,
  to: MembershipRequestStatus,
  now: number,
): Promise<RequestRow | undefined> {
  return db
    .updateTable('organization_membership_requests')
    .set({ status: to, updated_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', requestId)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

export async function findRequestOf(db: Db, environmentId: EnvironmentId, organizationId: string, userId: string) {
  return db
    .selectFrom('organization_membership_requests')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
}

export async function findRequest(db: Db, environmentId: EnvironmentId, requestId: string) {
  return db
    .selectFrom('organization_membership_requests')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', requestId)
    .executeTakeFirst();
}

/**
 * A user's open suggestions and requests, with their organizations, and what decides whether a
 * suggestion still stands: the user's current address and the domain that offered it.
 */
export async function listSuggestionsFor(db: Db, environmentId: EnvironmentId, userId: string, requestId?: string) {
  let query = db
    .selectFrom('organization_membership_requests as r')
    .innerJoin('organizations as o', (join) =>
      join.onRef('o.environment_id', '=', 'r.environment_id').onRef('o.id', '=', 'r.organization_id'),
    )
    .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 'r.environment_id').onRef('u.id', '=', 'r.user_id'))
    .leftJoin('organization_domains as d', (join) =>
      join.onRef('d.environment_id', '=', 'r.environment_id').onRef('d.id', '=', 'r.domain_id'),
    )
    .selectAll('r')
    .select(['o.name as organization_name', 'o.slug as organization_slug', 'o.image_url as organization_image_url'])
    .select(['u.email as user_email', 'u.email_verified as user_email_verified', 'd.name as domain_name', 'd.verified as domain_verified'])
    .where('r.environment_id', '=', environmentId)
    .where('r.user_id', '=', userId)
    .where('r.status', 'in', ['suggested', 'pending']);
  if (requestId !== undefined) query = query.where('r.id', '=', requestId);
  return query.orderBy('r.created_at', 'desc').limit(100).execute();
}

export type SuggestionRow = Awaited<ReturnType<typeof listSuggestionsFor>>[number];

/** An organization's requests in one status, with the requester's email, oldest first. */
export async function listRequests(db: Db, environmentId: EnvironmentId, organizationId: string, status: MembershipRequestStatus) {
  return db
    .selectFrom('organization_membership_requests as r')
    .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 'r.environment_id').onRef('u.id', '=', 'r.user_id'))
    .selectAll('r')
    .select('u.email')
    .where('r.environment_id', '=', environmentId)
    .where('r.organization_id', '=', organizationId)
    .where('r.status', '=', status)
    .orderBy('r.created_at')
    .limit(500)
    .execute();
}

export async function findRequestWithEmail(db: Db, environmentId: EnvironmentId, requestId: string) {
  return db
    .selectFrom('organization_membership_requests as r')
    .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 'r.environment_id').onRef('u.id', '=', 'r.user_id'))
    .selectAll('r')
    .select('u.email')
    .where('r.environment_id', '=', environmentId)
    .where('r.id', '=', requestId)
    .executeTakeFirst();
}

export async function deleteSuggestionsOfDomain(db: Db, environmentId: EnvironmentId, domainId: string) {
  await db
    .deleteFrom('organization_membership_requests')
    .where('environment_id', '=', environmentId)
    .where('domain_id', '=', domainId)
    .where('status', '=', 'suggested')
    .execute();
}
