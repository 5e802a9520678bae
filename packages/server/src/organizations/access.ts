import type { EnvironmentId } from '../lib/ids.js';
import type { Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import type { Database } from '../db/schema.js';
import type { SessionIdentity } from '../http/credentials.js';
import { ApiError, apiError, notFound } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';
import * as roles from './role-queries.js';
import { escalation, isSystemRole, parsePermissions, type Permission, SYSTEM_ROLES } from './roles.js';

/**
 * What every organization sub-resource (the organization, its members, its roles, the invitations
 * to come) shares: who the actor is, their live membership and permissions, the organization row
 * lock that orders changes, and the refusals that say what to do.
 */

export type Tx = Transaction<Database>;

/**
 * Who asks for a change. `backend` is the secret key: full administrative control, still bound by
 * the last-owner invariant. `member` is a signed-in user acting on their session's current
 * organization: every permission is read from their live membership inside the transaction.
 */
export type Actor = { kind: 'backend' } | { kind: 'member'; userId: string };

export interface ActorMembership {
  role: string;
  permissions: readonly string[];
}

// ---- refusals, each saying what happened and what to do

const SWITCH_HINT = 'Switch to another organization with POST /v1/auth/switch-organization (GET /v1/me/organizations lists yours).';

function noCurrentOrganization(): ApiError {
  return apiError(
    'not_found',
    `This session has no current organization. Switch to one with POST /v1/auth/switch-organization (GET /v1/me/organizations lists yours).`,
  );
}

export function currentOrganizationGone(organizationId: string): ApiError {
  return apiError('not_found', `The session's current organization ${organizationId} no longer exists. ${SWITCH_HINT}`);
}

export function membershipGone(organizationId: string): ApiError {
  return apiError(
    'forbidden',
    `You are no longer a member of organization ${organizationId}, the session's current organization. ${SWITCH_HINT}`,
  );
}

/** An organization that requires MFA, reached by a session that has not verified a second factor. */
export function secondFactorRequired(): ApiError {
  return apiError(
    'second_factor_required',
    'This organization requires multi-factor authentication: verify a second factor in this session (POST /v1/me/reverify with an authenticator code), or enable one first (POST /v1/me/mfa/totp).',
  );
}

export function lastOwner(organizationId: string): ApiError {
  return apiError(
    'forbidden',
    `This is the last owner of organization ${organizationId}; an organization must keep at least one owner, so the last owner cannot be removed or demoted: transfer ownership first (make another member an owner), then retry.`,
  );
}

function onlyOwners(): ApiError {
  return apiError(
    'forbidden',
    'Only an owner can grant the owner role or change or remove an owner. Ask an owner of this organization to do it.',
  );
}

function beyondOwnRights(role: string, lacking: string[]): ApiError {
  return apiError(
    'forbidden',
    `Role "${role}" carries ${lacking.join(', ')}, which your own role lacks; only an owner can grant it, change it, or remove someone who holds it.`,
  );
}

function missingPermission(role: string, permission: string, action: string): ApiError {
  return apiError(
    'forbidden',
    `${action} needs the ${permission} permission, and your role "${role}" in this organization does not include it (checked against your current membership, not your token). Ask an owner or admin.`,
  );
}

/** The one permission check: does the (live) membership's role carry `permission`? */
export function requirePermission(membership: ActorMembership, permission: Permission, action: string): void {
  if (!membership.permissions.includes(permission)) throw missingPermission(membership.role, permission, action);
}

export function trimmedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw apiError('invalid_request', 'Field "name" must not be blank.', { fields: ['name'] });
  return trimmed;
}

/** The organization that an actor names: for a member, a gone organization is their session's problem. */
export function organizationNotFound(actor: Actor, organizationId: string): ApiError {
  return actor.kind === 'member' ? currentOrganizationGone(organizationId) : notFound(`Organization ${organizationId}`);
}

export class OrganizationAccess {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.db;
  }

  /** The organization a session acts as, or a 404 saying there is none and how to pick one. */
  currentOrganizationId(session: SessionIdentity): string {
    if (session.activeOrganizationId === null) throw noCurrentOrganization();
    return session.activeOrganizationId;
  }

  /** The permissions of a role, read live; a custom role that no longer exists grants nothing. */
  async permissionsOf(db: Tx | Store['db'], environmentId: EnvironmentId, role: string): Promise<string[]> {
    if (isSystemRole(role)) return [...SYSTEM_ROLES[role].permissions];
    const row = await roles.findRole(db, environmentId, role);
    return row ? parsePermissions(row.permissions) : [];
  }

  /**
   * A non-owner may not grant a role carrying system permissions they lack (an admin handing out a
   * custom role with org:delete), nor change or remove someone who holds one.
   */
  async assertWithinOwnRights(tx: Tx, environmentId: EnvironmentId, membership: ActorMembership, role: string): Promise<void> {
    if (membership.role === 'owner') return;
    if (role === 'owner') throw onlyOwners();
    const lacking = escalation(await this.permissionsOf(tx, environmentId, role), membership.permissions);
    if (lacking.length > 0) throw beyondOwnRights(role, lacking);
  }

  /** Checks that `role` exists in the environment (locking a custom role against deletion); 400 otherwise. */
  async assignableRole(tx: Tx, environmentId: EnvironmentId, role: string): Promise<string> {
    if (isSystemRole(role)) return role;
    if (await roles.lockRole(this.store, tx, environmentId, role)) return role;
    const custom = (await roles.listRoles(tx, environmentId)).map((r) => r.key);
    throw apiError(
      'invalid_request',
      `Unknown role "${role}". Roles in this environment: ${['owner', 'admin', 'member', ...custom].join(', ')}. Custom roles are defined with POST /v1/platform/environments/{id}/roles.`,
      { fields: ['role'] },
    );
  }

  /**
   * Runs `change` in a transaction that first locks the organization row (PostgreSQL; SQLite runs
   * one transaction at a time), then reads the actor's live membership. Every membership or
   * organization change goes through here, so its checks see the state it changes.
   */
  async withOrganization<T>(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    change: (tx: Tx, org: q.OrganizationRow, membership: ActorMembership | null) => Promise<T>,
  ): Promise<T> {
    return inTransaction(this.db, async (tx) => {
      const org = await q.lockOrganization(this.store, tx, environment.id, organizationId);
      if (!org) throw organizationNotFound(actor, organizationId);
      const membership = actor.kind === 'member' ? await this.liveMembership(tx, environment.id, organizationId, actor.userId) : null;
      return change(tx, org, membership);
    });
  }

  /** The actor's membership and what its role allows, read now; 403 when they are no longer a member. */
  async liveMembership(db: Tx | Store['db'], environmentId: EnvironmentId, organizationId: string, userId: string): Promise<ActorMembership> {
    const row = await q.findMembership(db, environmentId, organizationId, userId);
    if (!row) throw membershipGone(organizationId);
    return { role: row.role, permissions: await this.permissionsOf(db, environmentId, row.role) };
  }

  /**
   * Throws unless the session's current organization grants `permission` to the user, read from
   * the live membership (never from the token's org_* claims): 404 when the session has no
   * current organization or it is gone, 403 when the membership or the permission is missing.
   * For checks outside a change, such as who may upload an organization image.
   */
  async assertCurrentPermission(environment: Environment, session: SessionIdentity, permission: Permission, action: string): Promise<void> {
    await this.assertLivePermission(environment, this.currentOrganizationId(session), session.userId, permission, action);
  }

  async assertLivePermission(
    environment: Environment,
    organizationId: string,
    userId: string,
    permission: Permission,
    action: string,
  ): Promise<void> {
    if (!(await q.findOrganization(this.db, environment.id, organizationId))) throw currentOrganizationGone(organizationId);
    requirePermission(await this.liveMembership(this.db, environment.id, organizationId, userId), permission, action);
  }
}

/** A cursor passed back to a listing other than the one that issued it. */
export function foreignCursor(): never {
  throw apiError('invalid_request', 'The cursor belongs to another listing. Pass back the nextCursor value of this listing.', {
    fields: ['cursor'],
  });
}
