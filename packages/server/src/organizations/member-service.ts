import type { Store } from '../db/index.js';
import { addMembership } from './memberships.js';
import { inTransaction } from '../db/changes.js';
import type { SessionIdentity } from '../http/credentials.js';
import { ApiError, apiError } from '../lib/errors.js';
import { normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import type { Environment } from '../tenancy/settings.js';
import { type Actor, lastOwner, membershipGone, type OrganizationAccess, organizationNotFound, requirePermission } from './access.js';
import * as q from './queries.js';
import { PERMISSIONS } from './roles.js';
import { memberView, type MemberView } from './views.js';

export interface MemberServiceOptions {
  store: Store;
  access: OrganizationAccess;
  now: () => number;
  /** Users are read through identity, in this service's transactions. */
  identity: Pick<IdentityService, 'findUser' | 'findUserByEmail'>;
}

function memberNotFound(organizationId: string, userId: string): ApiError {
  return apiError('not_found', `User ${userId} is not a member of organization ${organizationId}.`);
}

function alreadyMember(email: string): ApiError {
  return apiError('conflict', `${email} is already a member of this organization; change their role with PATCH on the member instead.`);
}

/**
 * An organization's members. Every change runs under the organization row lock with the actor's
 * live membership (OrganizationAccess.withOrganization), so the last-owner rule and the
 * permission checks see the state they change.
 */
export class MemberService {
  private readonly store: Store;
  private readonly access: OrganizationAccess;
  private readonly now: () => number;
  private readonly identity: MemberServiceOptions['identity'];

  constructor(options: MemberServiceOptions) {
    this.store = options.store;
    this.access = options.access;
    this.now = options.now;
    this.identity = options.identity;
  }

  private get db() {
    return this.store.db;
  }

  /** The organization a session acts as, or a 404 saying there is none and how to pick one. */
  currentOrganizationId(session: SessionIdentity): string {
    return this.access.currentOrganizationId(session);
  }

  async listMembers(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    options: { limit: number; after?: { createdAt: number; userId: string } | undefined },
  ): Promise<{ members: MemberView[]; hasMore: boolean }> {
    const rows = await inTransaction(this.db, async (tx) => {
      if (!(await q.findOrganization(tx, environment.id, organizationId))) throw organizationNotFound(actor, organizationId);
      if (actor.kind === 'member' && !(await q.findMembership(tx, environment.id, organizationId, actor.userId))) {
        throw membershipGone(organizationId);
      }
      return q.listMembers(tx, environment.id, organizationId, { limit: options.limit + 1, after: options.after });
    });
    return { members: rows.slice(0, options.limit).map(memberView), hasMore: rows.length > options.limit };
  }

  async getMember(environment: Environment, actor: Actor, organizationId: string, userId: string): Promise<MemberView> {
    return inTransaction(this.db, async (tx) => {
      if (!(await q.findOrganization(tx, environment.id, organizationId))) throw organizationNotFound(actor, organizationId);
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
    return this.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      // Permission first: without it, a caller learns nothing, not even which roles exist.
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Adding members');
      const role = await this.access.assignableRole(tx, environment.id, input.role);
      if (membership) await this.access.assertWithinOwnRights(tx, environment.id, membership, role);
      // Looked up only after the permission check, so that without it nobody can probe which emails have accounts.
      const user =
        email !== undefined
          ? await this.identity.findUserByEmail(tx, environment, email)
          : await this.identity.findUser(tx, environment, input.userId!);
      const noSuchUser = () =>
        email !== undefined
          ? apiError(
              'user_not_found',
              `No account with email ${email} exists in this environment. Invite them instead: POST /v1/organizations/{id}/invitations (or /v1/me/organization/invitations) emails a link that creates their account and joins them.`,
              {
                fields: ['email'],
              },
            )
          : apiError('user_not_found', `No user ${input.userId} exists in this environment; create the user first.`, {
              fields: ['userId'],
            });
      if (!user) throw noSuchUser();
      const now = this.now();
      await addMembership(
        tx,
        environment.id,
        { organizationId, userId: user.id, role, now },
        { alreadyMember: () => alreadyMember(user.email), userGone: noSuchUser },
      );
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
    return this.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Changing member roles');
      const target = await q.findMembership(tx, environment.id, organizationId, userId);
      if (!target) throw memberNotFound(organizationId, userId);
      const next = await this.access.assignableRole(tx, environment.id, role);
      if (membership) {
        await this.access.assertWithinOwnRights(tx, environment.id, membership, target.role);
        await this.access.assertWithinOwnRights(tx, environment.id, membership, next);
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
    return this.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      const target = await q.findMembership(tx, environment.id, organizationId, userId);
      if (!target) throw memberNotFound(organizationId, userId);
      const self = actor.kind === 'member' && actor.userId === userId;
      if (membership && !self) {
        requirePermission(membership, PERMISSIONS.membersManage, 'Removing another member');
        await this.access.assertWithinOwnRights(tx, environment.id, membership, target.role);
      }
      if (target.role === 'owner' && (await q.countOwners(tx, environment.id, organizationId)) <= 1) throw lastOwner(organizationId);
      await q.deleteMembership(tx, environment.id, organizationId, userId);
      return { organizationId, userId, removed: true as const };
    });
  }
}
