import { apiError } from '../lib/errors.js';

/**
 * Roles and permissions (docs/organizations.md). System roles are fixed; an environment may add
 * custom roles, each with its own permission set. A membership's permissions are always read from
 * the live role definition, never from token claims.
 */

export const PERMISSIONS = {
  manage: 'org:manage',
  membersManage: 'org:members:manage',
  delete: 'org:delete',
} as const;

export type Permission = (typeof PERMISSIONS)[keyof typeof PERMISSIONS];

export type SystemRole = 'owner' | 'admin' | 'member';

export const SYSTEM_ROLES: Record<SystemRole, { name: string; description: string; permissions: readonly string[] }> = {
  owner: {
    name: 'Owner',
    description: 'Full control, including deleting the organization and managing owners.',
    permissions: [PERMISSIONS.manage, PERMISSIONS.membersManage, PERMISSIONS.delete],
  },
  admin: {
    name: 'Admin',
    description: 'Manages the organization and its members, except owners.',
    permissions: [PERMISSIONS.manage, PERMISSIONS.membersManage],
  },
  member: { name: 'Member', description: 'Belongs to the organization, with no management rights.', permissions: [] },
};

export function isSystemRole(role: string): role is SystemRole {
  return Object.hasOwn(SYSTEM_ROLES, role);
}

/** Custom role keys: short, lowercase, safe to put in a token claim. */
export const ROLE_KEY = /^[a-z][a-z0-9_-]{0,62}[a-z0-9]$/;

/** `org:<feature>:<action>`, or one of the system permissions (`org:manage`, `org:delete`). */
const PERMISSION_KEY = /^org:[a-z][a-z0-9_-]{0,62}:[a-z][a-z0-9_-]{0,62}$/;
const SYSTEM_PERMISSIONS = new Set<string>(Object.values(PERMISSIONS));

/** The system permissions in `permissions` that `held` lacks: what granting that role would escalate. */
export function escalation(permissions: readonly string[], held: readonly string[]): string[] {
  return permissions.filter((p) => SYSTEM_PERMISSIONS.has(p) && !held.includes(p));
}

export function validRoleKey(key: string): string {
  if (!ROLE_KEY.test(key)) {
    throw apiError(
      'invalid_request',
      'Field "key" must be 2 to 64 characters of lowercase letters, digits, "_" or "-", starting with a letter and ending with a letter or digit.',
      { fields: ['key'] },
    );
  }
  return key;
}

/** Deduplicated, validated permission keys, in the order given. */
export function validPermissions(permissions: readonly string[]): string[] {
  const invalid = permissions.filter((p) => !SYSTEM_PERMISSIONS.has(p) && !PERMISSION_KEY.test(p));
  if (invalid.length > 0) {
    throw apiError(
      'invalid_request',
      `Permission keys must have the form org:<feature>:<action> (lowercase), such as org:billing:read; ${invalid
        .slice(0, 5)
        .map((p) => JSON.stringify(p))
        .join(', ')} ${invalid.length === 1 ? 'does' : 'do'} not.`,
      { fields: ['permissions'] },
    );
  }
  return [...new Set(permissions)];
}

export function parsePermissions(json: string): string[] {
  const value = JSON.parse(json) as unknown;
  return Array.isArray(value) ? value.filter((p): p is string => typeof p === 'string') : [];
}
