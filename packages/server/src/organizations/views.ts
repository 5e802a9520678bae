import type * as q from './queries.js';
import { parsePermissions } from './roles.js';

export interface OrganizationView {
  id: string;
  name: string;
  slug: string;
  imageUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

/** An organization as its member sees it: with their role and what it allows. */
export interface UserOrganizationView extends OrganizationView {
  role: string;
  permissions: string[];
}

export interface MemberView {
  userId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  imageUrl: string | null;
  role: string;
  createdAt: number;
}

export interface RoleView {
  key: string;
  name: string;
  description: string | null;
  permissions: string[];
  system: boolean;
  createdAt: number | null;
  updatedAt: number | null;
}

export function organizationView(row: q.OrganizationRow): OrganizationView {
  return { id: row.id, name: row.name, slug: row.slug, imageUrl: row.image_url, createdAt: row.created_at, updatedAt: row.updated_at };
}

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

export function roleView(row: q.RoleRow): RoleView {
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
