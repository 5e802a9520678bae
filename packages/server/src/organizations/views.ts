import type { Member, Organization, Role, UserOrganization } from '@gatehouse/contract';
import type * as q from './queries.js';
import type * as roles from './role-queries.js';
import { organizationData } from './event-data.js';
import { parsePermissions } from './roles.js';

export type OrganizationView = Organization;

/** An organization as its member sees it: with their role and what it allows. */
export type UserOrganizationView = UserOrganization;

export type MemberView = Member;

export type RoleView = Role;

/** The same object the organization.* webhook events carry. */
export const organizationView: (row: q.OrganizationRow) => OrganizationView = organizationData;

export function memberView(row: q.MemberRow): MemberView {
  return {
    userId: row.user_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    imageUrl: row.image_url,
    role: row.role,
    createdAt: row.created_at,
  };
}

export function roleView(row: roles.RoleRow): RoleView {
  return {
    key: row.key,
    name: row.name,
    description: row.description,
    permissions: parsePermissions(row.permissions),
    system: false,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
