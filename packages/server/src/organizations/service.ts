import type { EnvironmentId } from '../lib/ids.js';
import { isForeignKeyViolation, isUniqueViolation, type Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { RowCache, type RowCacheOptions } from '../db/row-cache.js';
import type { ImageUrlCheck } from '../assets/image-url.js';
import type { SessionIdentity } from '../http/credentials.js';
import { ApiError, apiError, notFound } from '../lib/errors.js';
import type { IdentityService } from '../identity/service.js';
import { newId } from '../lib/crypto.js';
import type { SessionService } from '../sessions/service.js';
import { assertUserDeletable, withPermissions } from './claims.js';
import type { Environment } from '../tenancy/settings.js';
import {
  type Actor,
  currentOrganizationGone,
  membershipGone,
  type OrganizationAccess,
  requirePermission,
  secondFactorRequired,
  trimmedName,
  type Tx,
} from './access.js';
import * as q from './queries.js';
import { PERMISSIONS, type Permission, SYSTEM_ROLES } from './roles.js';
import { slugFromName, suffixedSlug, validSlug } from './slugs.js';
import { organizationView, type OrganizationView, type UserOrganizationView } from './views.js';

export interface OrganizationServiceOptions {
  store: Store;
  /** The one imageUrl rule (`AssetService.acceptImageUrl`). */
  acceptImageUrl: ImageUrlCheck;
  access: OrganizationAccess;
  now: () => number;
  /** Users are read through identity, in this service's transactions. */
  identity: Pick<IdentityService, 'findUser'>;
  /**
   * Not read any more: a session whose organization is gone is cleared where its token is signed
   * (sessions/access-token-issuer.ts). Still accepted, so existing callers need no change.
   */
  sessions?: Pick<SessionService, 'clearActiveOrganization'> | undefined;
  /** Without one, every GET /v1/me reads the caller's organizations. */
  meCache?: MeOrganizationsCache | undefined;
  /** Whether the cache may serve this request (with several nodes: this node is caught up; sessions/service.ts). */
  meCacheServes?: ((session: SessionIdentity) => boolean) | undefined;
  /** Runs in the deletion's transaction, the organization locked: what belongs to it goes too (its API keys). */
  deleting?: ((tx: Tx, environment: Environment, organizationId: string) => Promise<void>) | undefined;
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
  /** Members must have verified a second factor to act as it (docs/mfa.md). */
  mfaRequired?: boolean | undefined;
}

export class OrganizationService {
  private readonly store: Store;
  private readonly acceptImageUrl: ImageUrlCheck;
  private readonly now: () => number;
  private readonly meCache: MeOrganizationsCache | undefined;
  private readonly access: OrganizationAccess;
  private readonly identity: OrganizationServiceOptions['identity'];
  private readonly meCacheServes: (session: SessionIdentity) => boolean;
  private readonly deleting: OrganizationServiceOptions['deleting'];

  constructor(options: OrganizationServiceOptions) {
    this.access = options.access;
    this.identity = options.identity;
    this.store = options.store;
    this.acceptImageUrl = options.acceptImageUrl;
    this.now = options.now;
    this.meCache = options.meCache;
    this.meCacheServes = options.meCacheServes ?? (() => true);
    this.deleting = options.deleting;
  }

  private get db() {
    return this.store.db;
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
        mfa_required: 0,
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

  /** Requiring MFA needs second factors on in the environment (400 while its mfa is "off"). */
  assertMfaRequirable(environment: Environment): void {
    if (environment.settings.mfa === 'off') {
      throw apiError(
        'invalid_request',
        'Second factors are off for this environment (mfa is "off"), so an organization cannot require them.',
        {
          fields: ['mfaRequired'],
        },
      );
    }
  }

  private async changeOrganization(environment: Environment, actor: Actor, organizationId: string, patch: OrganizationPatch) {
    if (patch.mfaRequired === true) this.assertMfaRequirable(environment);
    // The image URL is checked before the transaction: verifying an own upload may read the object
    // store, which must not happen while the organization row is locked. A member is first asked
    // for org:manage, so that without it they get the 403 and cannot have uploads verified (a
    // failing S3 object is deleted); the transaction checks the permission again.
    let imageUrl = patch.imageUrl;
    if (imageUrl != null) {
      if (actor.kind === 'member') {
        await this.access.assertLivePermission(environment, organizationId, actor.userId, PERMISSIONS.manage, 'Changing the organization');
      }
      imageUrl = await this.acceptImageUrl(environment, imageUrl);
    }
    return this.access.withOrganization(environment, actor, organizationId, async (tx, org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.manage, 'Changing the organization');
      const columns: Parameters<typeof q.updateOrganization>[3] = { updated_at: this.now() };
      if (patch.name !== undefined) columns.name = trimmedName(patch.name);
      if (patch.slug !== undefined) columns.slug = validSlug(patch.slug);
      if (imageUrl !== undefined) columns.image_url = imageUrl;
      if (patch.mfaRequired !== undefined) columns.mfa_required = patch.mfaRequired ? 1 : 0;
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
    await this.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.delete, 'Deleting the organization');
      if (this.deleting) await this.deleting(tx, environment, organizationId);
      await q.deleteOrganization(tx, environment.id, organizationId);
    });
  }

  // ---- the session's organizations

  /** The organization a session acts as, or a 404 saying there is none and how to pick one. */
  currentOrganizationId(session: SessionIdentity): string {
    return this.access.currentOrganizationId(session);
  }

  /** Whether the session's current organization grants `permission`, read live (OrganizationAccess). */
  async assertCurrentPermission(environment: Environment, session: SessionIdentity, permission: Permission, action: string): Promise<void> {
    await this.access.assertCurrentPermission(environment, session, permission, action);
  }

  private withPermissions(environmentId: EnvironmentId, rows: q.UserOrganizationRow[]): Promise<UserOrganizationView[]> {
    return withPermissions(this.db, environmentId, rows);
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
    const cached = this.meCacheServes(session) ? this.meCache?.get(environment.id, session.userId) : undefined;
    const organizations = cached ?? (await this.readMeOrganizations(environment.id, session.userId));
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

  private async readMeOrganizations(environmentId: EnvironmentId, userId: string): Promise<readonly UserOrganizationView[]> {
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
  async authorizeSwitch(
    tx: Tx,
    environment: Environment,
    userId: string,
    organizationId: string | null,
    secondFactorVerified: boolean,
  ): Promise<void> {
    if (organizationId === null) return;
    const organization = await q.shareLockOrganization(this.store, tx, environment.id, organizationId);
    if (!organization) throw notFound(`Organization ${organizationId}`);
    if (!(await q.findMembership(tx, environment.id, organizationId, userId))) {
      throw apiError(
        'forbidden',
        `You are not a member of organization ${organizationId}, so this session cannot act as it. Switch only to an organization listed in GET /v1/me/organizations.`,
      );
    }
    if (organization.mfa_required === 1 && environment.settings.mfa !== 'off' && !secondFactorVerified) throw secondFactorRequired();
  }

  /**
   * The UserDeletionGuard, run inside identity's delete transaction with the user row locked: a user
   * who is the last owner of an organization cannot be deleted. It locks every organization the user
   * belongs to (in id order, so two deletions cannot deadlock) before counting owners, as membership
   * changes do, so a co-owner leaving at the same moment is ordered before or after it, never beside.
   */
  assertUserDeletable(tx: Tx, environment: Environment, userId: string): Promise<void> {
    return assertUserDeletable(this.store, tx, environment, userId);
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

/** Cached views are shared by every request: a caller that mutated one would change them all. */
function freezeView(view: UserOrganizationView): UserOrganizationView {
  Object.freeze(view.permissions);
  return Object.freeze(view);
}
