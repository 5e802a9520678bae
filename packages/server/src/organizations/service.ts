import type { Transaction } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation, type Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { RowCache, type RowCacheOptions } from '../db/row-cache.js';
import type { ImageUrlCheck } from '../assets/image-url.js';
import type { Database } from '../db/schema.js';
import type { SessionIdentity } from '../http/credentials.js';
import { ApiError, apiError, notFound } from '../lib/errors.js';
import { normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import { newId } from '../lib/crypto.js';
import type { ClaimsContext, SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';
import {
  escalation,
  isSystemRole,
  parsePermissions,
  PERMISSIONS,
  type Permission,
  SYSTEM_ROLES,
  validPermissions,
  validRoleKey,
} from './roles.js';
import { slugFromName, suffixedSlug, validSlug } from './slugs.js';

type Tx = Transaction<Database>;

/**
 * Who asks for a change. `backend` is the secret key: full administrative control, still bound by
 * the last-owner invariant. `member` is a signed-in user acting on their session's current
 * organization: every permission is read from their live membership inside the transaction.
 */
export type Actor = { kind: 'backend' } | { kind: 'member'; userId: string };

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

function memberView(row: q.MemberRow): MemberView {
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

function roleView(row: q.RoleRow): RoleView {
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

// ---- refusals, each saying what happened and what to do

const SWITCH_HINT = 'Switch to another organization with POST /v1/auth/switch-organization (GET /v1/me/organizations lists yours).';

function noCurrentOrganization(): ApiError {
  return apiError(
    'not_found',
    `This session has no current organization. Switch to one with POST /v1/auth/switch-organization (GET /v1/me/organizations lists yours).`,
  );
}

function currentOrganizationGone(organizationId: string): ApiError {
  return apiError('not_found', `The session's current organization ${organizationId} no longer exists. ${SWITCH_HINT}`);
}

function membershipGone(organizationId: string): ApiError {
  return apiError(
    'forbidden',
    `You are no longer a member of organization ${organizationId}, the session's current organization. ${SWITCH_HINT}`,
  );
}

function lastOwner(organizationId: string): ApiError {
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
function requirePermission(membership: ActorMembership, permission: Permission, action: string): void {
  if (!membership.permissions.includes(permission)) throw missingPermission(membership.role, permission, action);
}

function memberNotFound(organizationId: string, userId: string): ApiError {
  return apiError('not_found', `User ${userId} is not a member of organization ${organizationId}.`);
}

function trimmedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw apiError('invalid_request', 'Field "name" must not be blank.', { fields: ['name'] });
  return trimmed;
}

export interface OrganizationServiceOptions {
  store: Store;
  /** The one imageUrl rule (`AssetService.acceptImageUrl`). */
  acceptImageUrl: ImageUrlCheck;
  now: () => number;
  /** Users are read through identity, in this service's transactions. */
  identity: Pick<IdentityService, 'findUser' | 'findUserByEmail'>;
  sessions: Pick<SessionService, 'clearActiveOrganization'>;
  /** Without one, every GET /v1/me reads the caller's organizations. */
  meCache?: MeOrganizationsCache | undefined;
}

export type MeOrganizationsCache = RowCache<readonly UserOrganizationView[]>;

/**
 * The organization list GET /v1/me shows, per user, dropped when one of the user's memberships,
 * an organization or a role of the environment changes (on this node at commit, on others
 * through Redis).
 */
export function newMeOrganizationsCache(options?: RowCacheOptions): MeOrganizationsCache {
  return new RowCache<readonly UserOrganizationView[]>('userId', new Set(['environment', 'user', 'organizations']), options);
}

export interface OrganizationInput {
  name: string;
  slug?: string | undefined;
  imageUrl?: string | null | undefined;
}

export interface OrganizationPatch {
  name?: string | undefined;
  slug?: string | undefined;
  imageUrl?: string | null | undefined;
}

interface ActorMembership {
  role: string;
  permissions: readonly string[];
}

export class OrganizationService {
  private readonly store: Store;
  private readonly acceptImageUrl: ImageUrlCheck;
  private readonly now: () => number;
  private readonly meCache: MeOrganizationsCache | undefined;
  private readonly identity: OrganizationServiceOptions['identity'];
  private readonly sessions: OrganizationServiceOptions['sessions'];

  constructor(options: OrganizationServiceOptions) {
    this.identity = options.identity;
    this.sessions = options.sessions;
    this.store = options.store;
    this.acceptImageUrl = options.acceptImageUrl;
    this.now = options.now;
    this.meCache = options.meCache;
  }

  private get db() {
    return this.store.db;
  }

  // ---- roles

  /** The permissions of a role, read live; a custom role that no longer exists grants nothing. */
  private async permissionsOf(db: Tx | Store['db'], environmentId: string, role: string): Promise<string[]> {
    if (isSystemRole(role)) return [...SYSTEM_ROLES[role].permissions];
    const row = await q.findRole(db, environmentId, role);
    return row ? parsePermissions(row.permissions) : [];
  }

  /**
   * A non-owner may not grant a role carrying system permissions they lack (an admin handing out a
   * custom role with org:delete), nor change or remove someone who holds one.
   */
  private async assertWithinOwnRights(tx: Tx, environmentId: string, membership: ActorMembership, role: string): Promise<void> {
    if (membership.role === 'owner') return;
    if (role === 'owner') throw onlyOwners();
    const lacking = escalation(await this.permissionsOf(tx, environmentId, role), membership.permissions);
    if (lacking.length > 0) throw beyondOwnRights(role, lacking);
  }

  /** Checks that `role` exists in the environment (locking a custom role against deletion); 400 otherwise. */
  private async assignableRole(tx: Tx, environmentId: string, role: string): Promise<string> {
    if (isSystemRole(role)) return role;
    if (await q.lockRole(this.store, tx, environmentId, role)) return role;
    const custom = (await q.listRoles(tx, environmentId)).map((r) => r.key);
    throw apiError(
      'invalid_request',
      `Unknown role "${role}". Roles in this environment: ${['owner', 'admin', 'member', ...custom].join(', ')}. Custom roles are defined with POST /v1/platform/environments/{id}/roles.`,
      { fields: ['role'] },
    );
  }

  async listRoles(environment: Environment): Promise<RoleView[]> {
    const system: RoleView[] = Object.entries(SYSTEM_ROLES).map(([key, role]) => ({
      key,
      name: role.name,
      description: role.description,
      permissions: [...role.permissions],
      system: true,
      createdAt: null,
      updatedAt: null,
    }));
    return [...system, ...(await q.listRoles(this.db, environment.id)).map(roleView)];
  }

  async createRole(
    environment: Environment,
    input: { key: string; name: string; description?: string | null | undefined; permissions: string[] },
  ): Promise<RoleView> {
    const key = validRoleKey(input.key);
    if (isSystemRole(key)) {
      throw apiError('conflict', `"${key}" is a system role; choose another key for a custom role.`, { fields: ['key'] });
    }
    const now = this.now();
    const row: q.RoleRow = {
      environment_id: environment.id,
      key,
      name: trimmedName(input.name),
      description: input.description ?? null,
      permissions: JSON.stringify(validPermissions(input.permissions)),
      created_at: now,
      updated_at: now,
    };
    try {
      await q.insertRole(this.db, environment.id, row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw apiError('conflict', `A role with key "${key}" already exists in this environment; change it with PATCH instead.`, {
          fields: ['key'],
        });
      }
      throw error;
    }
    return roleView(row);
  }

  private refuseSystemRole(key: string, verb: string): void {
    if (isSystemRole(key)) {
      throw apiError('forbidden', `The system role "${key}" cannot be ${verb}; define a custom role with the permissions you need.`);
    }
  }

  async updateRole(
    environment: Environment,
    key: string,
    patch: { name?: string | undefined; description?: string | null | undefined; permissions?: string[] | undefined },
  ): Promise<RoleView> {
    this.refuseSystemRole(key, 'changed');
    const columns: Parameters<typeof q.updateRole>[3] = { updated_at: this.now() };
    if (patch.name !== undefined) columns.name = trimmedName(patch.name);
    if (patch.description !== undefined) columns.description = patch.description;
    if (patch.permissions !== undefined) columns.permissions = JSON.stringify(validPermissions(patch.permissions));
    if (!(await q.updateRole(this.db, environment.id, key, columns))) throw notFound(`Role ${key}`);
    return roleView((await q.findRole(this.db, environment.id, key))!);
  }

  async deleteRole(environment: Environment, key: string): Promise<void> {
    this.refuseSystemRole(key, 'deleted');
    await inTransaction(this.db, async (tx) => {
      if (!(await q.lockRole(this.store, tx, environment.id, key))) throw notFound(`Role ${key}`);
      const holders = await q.countMembershipsWithRole(tx, environment.id, key);
      if (holders > 0) {
        throw apiError(
          'conflict',
          `Role "${key}" is held by ${holders} membership${holders === 1 ? '' : 's'}; change their roles first, then delete it.`,
        );
      }
      await q.deleteRole(tx, environment.id, key);
    });
  }

  // ---- organizations

  /** Inserts an organization with its first owner; a generated slug that is taken gets a suffix. */
  private async insertOrganization(environment: Environment, input: OrganizationInput, ownerId: string): Promise<OrganizationView> {
    const name = trimmedName(input.name);
    const explicit = input.slug !== undefined;
    const baseSlug = explicit ? validSlug(input.slug!) : slugFromName(name);
    const imageUrl = input.imageUrl == null ? null : await this.acceptImageUrl(environment, input.imageUrl);

    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.now();
      const row: q.OrganizationRow = {
        environment_id: environment.id,
        id: newId('org', environment.id),
        name,
        slug: attempt === 0 ? baseSlug : suffixedSlug(baseSlug),
        image_url: imageUrl,
        created_at: now,
        updated_at: now,
      };
      try {
        await inTransaction(this.db, async (tx) => {
          if (!(await this.identity.findUser(tx, environment, ownerId))) throw ownerNotFound(ownerId);
          await q.insertOrganization(tx, environment.id, row);
          await q.insertMembership(tx, environment.id, {
            organization_id: row.id,
            user_id: ownerId,
            role: 'owner',
            created_at: now,
            updated_at: now,
          });
        });
        return organizationView(row);
      } catch (error) {
        if (isForeignKeyViolation(error)) throw ownerNotFound(ownerId);
        if (!isUniqueViolation(error)) throw error;
        if (explicit) throw slugTaken(row.slug);
      }
    }
    throw slugTaken(baseSlug);
  }

  /** POST /v1/organizations: `ownerId` becomes the first owner. */
  async createOrganization(environment: Environment, input: OrganizationInput & { ownerId: string }): Promise<OrganizationView> {
    return this.insertOrganization(environment, input, input.ownerId);
  }

  /** POST /v1/me/organizations: the creator becomes the owner, unless the environment turned this off. */
  async createForUser(environment: Environment, userId: string, input: OrganizationInput): Promise<UserOrganizationView> {
    if (!environment.settings.usersCanCreateOrganizations) {
      throw apiError(
        'forbidden',
        'Creating organizations from a session is turned off for this environment. Create it from your backend with POST /v1/organizations, or enable usersCanCreateOrganizations in the environment settings.',
      );
    }
    const org = await this.insertOrganization(environment, input, userId);
    return { ...org, role: 'owner', permissions: [...SYSTEM_ROLES.owner.permissions] };
  }

  async getOrganization(environment: Environment, organizationId: string): Promise<OrganizationView> {
    const row = await q.findOrganization(this.db, environment.id, organizationId);
    if (!row) throw notFound(`Organization ${organizationId}`);
    return organizationView(row);
  }

  async listOrganizations(
    environment: Environment,
    options: { limit: number; beforeId: string | undefined; query: string | undefined },
  ): Promise<{ organizations: OrganizationView[]; hasMore: boolean }> {
    const query = options.query?.trim() || undefined;
    const rows = await q.listOrganizations(this.db, environment.id, { ...options, query, limit: options.limit + 1 });
    return { organizations: rows.slice(0, options.limit).map(organizationView), hasMore: rows.length > options.limit };
  }

  /**
   * Runs `change` in a transaction that first locks the organization row (PostgreSQL; SQLite runs
   * one transaction at a time), then reads the actor's live membership. Every membership or
   * organization change goes through here, so its checks see the state it changes.
   */
  private async withOrganization<T>(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    change: (tx: Tx, org: q.OrganizationRow, membership: ActorMembership | null) => Promise<T>,
  ): Promise<T> {
    return inTransaction(this.db, async (tx) => {
      const org = await q.lockOrganization(this.store, tx, environment.id, organizationId);
      if (!org) throw actor.kind === 'member' ? currentOrganizationGone(organizationId) : notFound(`Organization ${organizationId}`);
      const membership = actor.kind === 'member' ? await this.liveMembership(tx, environment.id, organizationId, actor.userId) : null;
      return change(tx, org, membership);
    });
  }

  /** The actor's membership and what its role allows, read now; 403 when they are no longer a member. */
  private async liveMembership(db: Tx | Store['db'], environmentId: string, organizationId: string, userId: string) {
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

  private async assertLivePermission(
    environment: Environment,
    organizationId: string,
    userId: string,
    permission: Permission,
    action: string,
  ): Promise<void> {
    if (!(await q.findOrganization(this.db, environment.id, organizationId))) throw currentOrganizationGone(organizationId);
    requirePermission(await this.liveMembership(this.db, environment.id, organizationId, userId), permission, action);
  }

  /** PATCH /v1/organizations/{id}. */
  async updateOrganization(environment: Environment, organizationId: string, patch: OrganizationPatch): Promise<OrganizationView> {
    return (await this.changeOrganization(environment, { kind: 'backend' }, organizationId, patch)).view;
  }

  /** PATCH /v1/me/organization: needs org:manage on the live membership. */
  async updateCurrentOrganization(
    environment: Environment,
    userId: string,
    organizationId: string,
    patch: OrganizationPatch,
  ): Promise<UserOrganizationView> {
    const { view, membership } = await this.changeOrganization(environment, { kind: 'member', userId }, organizationId, patch);
    return { ...view, role: membership!.role, permissions: [...membership!.permissions] };
  }

  private async changeOrganization(environment: Environment, actor: Actor, organizationId: string, patch: OrganizationPatch) {
    // The image URL is checked before the transaction: verifying an own upload may read the object
    // store, which must not happen while the organization row is locked. A member is first asked
    // for org:manage, so that without it they get the 403 and cannot have uploads verified (a
    // failing S3 object is deleted); the transaction checks the permission again.
    let imageUrl = patch.imageUrl;
    if (imageUrl != null) {
      if (actor.kind === 'member') {
        await this.assertLivePermission(environment, organizationId, actor.userId, PERMISSIONS.manage, 'Changing the organization');
      }
      imageUrl = await this.acceptImageUrl(environment, imageUrl);
    }
    return this.withOrganization(environment, actor, organizationId, async (tx, org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.manage, 'Changing the organization');
      const columns: Parameters<typeof q.updateOrganization>[3] = { updated_at: this.now() };
      if (patch.name !== undefined) columns.name = trimmedName(patch.name);
      if (patch.slug !== undefined) columns.slug = validSlug(patch.slug);
      if (imageUrl !== undefined) columns.image_url = imageUrl;
      try {
        await q.updateOrganization(tx, environment.id, organizationId, columns);
      } catch (error) {
        if (isUniqueViolation(error)) throw slugTaken(columns.slug ?? '');
        throw error;
      }
      return { view: organizationView({ ...org, ...columns } as q.OrganizationRow), membership };
    });
  }

  async deleteOrganization(environment: Environment, actor: Actor, organizationId: string): Promise<void> {
    await this.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.delete, 'Deleting the organization');
      await q.deleteOrganization(tx, environment.id, organizationId);
    });
  }

  // ---- members

  async listMembers(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    options: { limit: number; after?: { createdAt: number; userId: string } | undefined },
  ): Promise<{ members: MemberView[]; hasMore: boolean }> {
    const rows = await inTransaction(this.db, async (tx) => {
      if (!(await q.findOrganization(tx, environment.id, organizationId))) {
        throw actor.kind === 'member' ? currentOrganizationGone(organizationId) : notFound(`Organization ${organizationId}`);
      }
      if (actor.kind === 'member' && !(await q.findMembership(tx, environment.id, organizationId, actor.userId))) {
        throw membershipGone(organizationId);
      }
      return q.listMembers(tx, environment.id, organizationId, { limit: options.limit + 1, after: options.after });
    });
    return { members: rows.slice(0, options.limit).map(memberView), hasMore: rows.length > options.limit };
  }

  async getMember(environment: Environment, actor: Actor, organizationId: string, userId: string): Promise<MemberView> {
    return inTransaction(this.db, async (tx) => {
      if (!(await q.findOrganization(tx, environment.id, organizationId))) {
        throw actor.kind === 'member' ? currentOrganizationGone(organizationId) : notFound(`Organization ${organizationId}`);
      }
      if (actor.kind === 'member' && !(await q.findMembership(tx, environment.id, organizationId, actor.userId))) {
        throw membershipGone(organizationId);
      }
      const row = await q.findMember(tx, environment.id, organizationId, userId);
      if (!row) throw memberNotFound(organizationId, userId);
      return memberView(row);
    });
  }

  async addMember(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    input: { userId?: string | undefined; email?: string | undefined; role: string },
  ): Promise<MemberView> {
    if ((input.userId === undefined) === (input.email === undefined)) {
      throw apiError('invalid_request', 'Give exactly one of "userId" or "email" to name the user to add.', {
        fields: ['userId', 'email'],
      });
    }
    const email = input.email === undefined ? undefined : normalizeEmail(input.email);
    return this.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      // Permission first: without it, a caller learns nothing, not even which roles exist.
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Adding members');
      const role = await this.assignableRole(tx, environment.id, input.role);
      if (membership) await this.assertWithinOwnRights(tx, environment.id, membership, role);
      // Looked up only after the permission check, so that without it nobody can probe which emails have accounts.
      const user =
        email !== undefined
          ? await this.identity.findUserByEmail(tx, environment, email)
          : await this.identity.findUser(tx, environment, input.userId!);
      const noSuchUser = () =>
        email !== undefined
          ? apiError('user_not_found', `No account with email ${email} exists in this environment; they must sign up first.`, {
              fields: ['email'],
            })
          : apiError('user_not_found', `No user ${input.userId} exists in this environment; create the user first.`, {
              fields: ['userId'],
            });
      if (!user) throw noSuchUser();
      if (await q.findMembership(tx, environment.id, organizationId, user.id)) throw alreadyMember(user.email);
      const now = this.now();
      try {
        await q.insertMembership(tx, environment.id, {
          organization_id: organizationId,
          user_id: user.id,
          role,
          created_at: now,
          updated_at: now,
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyMember(user.email);
        // Deleted after we read it: the deletion held the user row, so the insert waited and failed.
        if (isForeignKeyViolation(error)) throw noSuchUser();
        throw error;
      }
      return memberView({ ...user, user_id: user.id, role, created_at: now });
    });
  }

  async updateMemberRole(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    userId: string,
    role: string,
  ): Promise<MemberView> {
    return this.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Changing member roles');
      const target = await q.findMembership(tx, environment.id, organizationId, userId);
      if (!target) throw memberNotFound(organizationId, userId);
      const next = await this.assignableRole(tx, environment.id, role);
      if (membership) {
        await this.assertWithinOwnRights(tx, environment.id, membership, target.role);
        await this.assertWithinOwnRights(tx, environment.id, membership, next);
      }
      if (target.role === 'owner' && next !== 'owner' && (await q.countOwners(tx, environment.id, organizationId)) <= 1) {
        throw lastOwner(organizationId);
      }
      if (target.role !== next) await q.updateMembershipRole(tx, environment.id, organizationId, userId, next, this.now());
      return memberView((await q.findMember(tx, environment.id, organizationId, userId))!);
    });
  }

  /** Anyone may remove themselves; removing someone else needs org:members:manage (and owner for an owner). */
  async removeMember(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    userId: string,
  ): Promise<{ organizationId: string; userId: string; removed: true }> {
    return this.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      const target = await q.findMembership(tx, environment.id, organizationId, userId);
      if (!target) throw memberNotFound(organizationId, userId);
      const self = actor.kind === 'member' && actor.userId === userId;
      if (membership && !self) {
        requirePermission(membership, PERMISSIONS.membersManage, 'Removing another member');
        await this.assertWithinOwnRights(tx, environment.id, membership, target.role);
      }
      if (target.role === 'owner' && (await q.countOwners(tx, environment.id, organizationId)) <= 1) throw lastOwner(organizationId);
      await q.deleteMembership(tx, environment.id, organizationId, userId);
      return { organizationId, userId, removed: true as const };
    });
  }

  // ---- the session's organizations

  /** The organization a session acts as, or a 404 saying there is none and how to pick one. */
  currentOrganizationId(session: SessionIdentity): string {
    if (session.activeOrganizationId === null) throw noCurrentOrganization();
    return session.activeOrganizationId;
  }

  private async withPermissions(environmentId: string, rows: q.UserOrganizationRow[]): Promise<UserOrganizationView[]> {
    const custom = rows.some((r) => !isSystemRole(r.role))
      ? new Map((await q.listRoles(this.db, environmentId)).map((r) => [r.key, parsePermissions(r.permissions)]))
      : new Map<string, string[]>();
    return rows.map((row) => ({
      ...organizationView(row),
      role: row.role,
      permissions: isSystemRole(row.role) ? [...SYSTEM_ROLES[row.role].permissions] : (custom.get(row.role) ?? []),
    }));
  }

  async listUserOrganizations(
    environment: Environment,
    userId: string,
    options: { limit: number; after?: { joinedAt: number; organizationId: string } | undefined },
  ): Promise<{ organizations: (UserOrganizationView & { joinedAt: number })[]; hasMore: boolean }> {
    const rows = await q.listUserOrganizations(this.db, environment.id, userId, { limit: options.limit + 1, after: options.after });
    const page = rows.slice(0, options.limit);
    const views = await this.withPermissions(environment.id, page);
    return { organizations: views.map((v, i) => ({ ...v, joinedAt: page[i]!.joined_at })), hasMore: rows.length > options.limit };
  }

  /** GET /v1/me/organization: the current organization with the caller's live role. */
  async currentOrganization(environment: Environment, session: SessionIdentity): Promise<UserOrganizationView> {
    const organizationId = this.currentOrganizationId(session);
    const row = await q.findUserOrganization(this.db, environment.id, session.userId, organizationId);
    if (!row) {
      if (!(await q.findOrganization(this.db, environment.id, organizationId))) throw currentOrganizationGone(organizationId);
      throw membershipGone(organizationId);
    }
    return (await this.withPermissions(environment.id, [row]))[0]!;
  }

  /** What GET /v1/me shows: the switcher's list (first 100) and the current organization, or null. */
  async meOrganizations(
    environment: Environment,
    session: SessionIdentity,
  ): Promise<{ organizations: readonly UserOrganizationView[]; organization: UserOrganizationView | null }> {
    const organizations =
      this.meCache?.get(environment.id, session.userId) ?? (await this.readMeOrganizations(environment.id, session.userId));
    let organization: UserOrganizationView | null = null;
    if (session.activeOrganizationId !== null) {
      organization = organizations.find((o) => o.id === session.activeOrganizationId) ?? null;
      if (!organization) {
        const row = await q.findUserOrganization(this.db, environment.id, session.userId, session.activeOrganizationId);
        organization = row ? (await this.withPermissions(environment.id, [row]))[0]! : null;
      }
    }
    return { organizations, organization };
  }

  private async readMeOrganizations(environmentId: string, userId: string): Promise<readonly UserOrganizationView[]> {
    const generation = this.meCache?.generation ?? 0;
    const rows = await q.listMeOrganizations(this.db, environmentId, userId);
    const organizations = Object.freeze((await this.withPermissions(environmentId, rows)).map(freezeView));
    this.meCache?.set({ environmentId, userId }, organizations, generation);
    return organizations;
  }

  /**
   * The switch-organization check, in the transaction that writes the session: the organization
   * exists here and the user is a member of it. The organization's row is share-locked first, so a
   * membership change (which locks it for update) is ordered wholly before or after the switch.
   */
  async authorizeSwitch(tx: Tx, environment: Environment, userId: string, organizationId: string | null): Promise<void> {
    if (organizationId === null) return;
    if (!(await q.shareLockOrganization(this.store, tx, environment.id, organizationId))) throw notFound(`Organization ${organizationId}`);
    if (!(await q.findMembership(tx, environment.id, organizationId, userId))) {
      throw apiError(
        'forbidden',
        `You are not a member of organization ${organizationId}, so this session cannot act as it. Switch only to an organization listed in GET /v1/me/organizations.`,
      );
    }
  }

  /**
   * The org_* claims of a new access token (a snapshot for UIs; Gatehouse authorizes nothing with
   * them). When the membership has gone, the session's active organization is cleared instead.
   */
  async claimsFor(context: ClaimsContext): Promise<Record<string, unknown>> {
    const organizationId = context.activeOrganizationId;
    if (organizationId === null) return {};
    const row = await q.findUserOrganization(this.db, context.environment.id, context.userId, organizationId);
    if (!row) {
      await this.sessions.clearActiveOrganization(context.environment, context.sessionId, organizationId);
      return {};
    }
    const [view] = await this.withPermissions(context.environment.id, [row]);
    return { org_id: view!.id, org_slug: view!.slug, org_role: view!.role, org_permissions: view!.permissions };
  }

  /**
   * The UserDeletionGuard, run inside identity's delete transaction with the user row locked: a user
   * who is the last owner of an organization cannot be deleted. It locks every organization the user
   * belongs to (in id order, so two deletions cannot deadlock) before counting owners, as membership
   * changes do, so a co-owner leaving at the same moment is ordered before or after it, never beside.
   */
  async assertUserDeletable(tx: Tx, environment: Environment, userId: string): Promise<void> {
    // Every membership, not only owned ones: one could be promoted to owner while we decide.
    await q.lockOrganizationsOfMember(this.store, tx, environment.id, userId);
    const owned = await q.organizationsSolelyOwnedBy(tx, environment.id, userId);
    if (owned.length === 0) return;
    const names = owned.map((o) => `${JSON.stringify(o.name)} (${o.id})`).join(', ');
    throw apiError(
      'forbidden',
      `User ${userId} is the last owner of ${owned.length === 1 ? 'organization' : 'organizations'} ${names}, so they cannot be deleted: transfer ownership first (make another member an owner) or delete ${owned.length === 1 ? 'that organization' : 'those organizations'}, then delete the user.`,
      { organizations: owned.map((o) => ({ id: o.id, name: o.name })) },
    );
  }
}

function ownerNotFound(ownerId: string): ApiError {
  return apiError('user_not_found', `No user ${ownerId} exists in this environment; create the user first.`, { fields: ['ownerId'] });
}

function slugTaken(slug: string): ApiError {
  return apiError('conflict', `The slug "${slug}" is already used by another organization in this environment; choose another.`, {
    fields: ['slug'],
  });
}

function alreadyMember(email: string): ApiError {
  return apiError('conflict', `${email} is already a member of this organization; change their role with PATCH on the member instead.`);
}

/** Cached views are shared by every request: a caller that mutated one would change them all. */
function freezeView(view: UserOrganizationView): UserOrganizationView {
  Object.freeze(view.permissions);
  return Object.freeze(view);
}
