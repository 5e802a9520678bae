import type { Member, Organization } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import type { Database, OrganizationsTable } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

// What organization.* and organizationMembership.* webhook events carry (db/events.ts records them).

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
