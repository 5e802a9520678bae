import type { Invitation, InvitationPreview, Member, UserInvitation } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { emailKey, normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import type { PasswordService } from '../identity/password-service.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { ApiError, apiError, userBanned } from '../lib/errors.js';
import type { Mail } from '../mail/mail.js';
import { linkWithToken, validateRedirectUrl } from '../tenancy/redirect.js';
import { type Actor, type OrganizationAccess, type Tx, requirePermission } from '../organizations/access.js';
import { addMembership } from '../organizations/memberships.js';
import { findMembership, findOrganization } from '../organizations/queries.js';
import { PERMISSIONS } from '../organizations/roles.js';
import { memberView } from '../organizations/views.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';
import { invitationStatus, invitationView, userInvitationView } from './views.js';

const DAY_MS = 86_400_000;
export const DEFAULT_EXPIRY_DAYS = 7;
/** Invitation emails one organization may send per hour (new or refreshed), against invitation floods. */
export const INVITATIONS_PER_HOUR = 100;
/** The most invitations one listing returns, newest first. */
const LIST_LIMIT = 500;

export interface InvitationServiceOptions {
  store: Store;
  access: OrganizationAccess;
  identity: Pick<IdentityService, 'findUser' | 'findUserByEmail' | 'createVerifiedUserIn' | 'markEmailVerified'>;
  passwords: Pick<PasswordService, 'acceptPassword'>;
  mail: Mail;
  now: () => number;
  baseUrl: string;
}

function invitationNotFound(invitationId: string): ApiError {
  return apiError('not_found', `Invitation ${invitationId} was not found in this organization.`);
}

/** Why an invitation can no longer be used, said the same way on every path. */
/** a***@example.com: the first character of the local part, then the domain. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, Math.min(1, at))}***${email.slice(at)}`;
}

function unusable(status: string): ApiError {
  switch (status) {
    case 'accepted':
      return apiError('conflict', 'This invitation was already accepted. Sign in to reach the organization.');
    case 'revoked':
      return apiError('conflict', 'This invitation was revoked. Ask the organization for a new one.');
    default:
      return apiError('conflict', 'This invitation has expired. Ask the organization to invite you again.');
  }
}

const INVALID_TOKEN = 'This invitation link is invalid. Open the newest invitation email, or ask the organization to invite you again.';

/**
 * Invitations to an organization by email. Every change runs under the organization row lock with
 * the actor's live membership (OrganizationAccess.withOrganization), like member changes, so an
 * invitation accepted while it is revoked ends one way only, and two acceptances make one member.
 */
export class InvitationService {
  constructor(private readonly options: InvitationServiceOptions) {}

  private get db() {
    return this.options.store.db;
  }

  /** Where an invitation link leads when the inviter names no page: the hosted accept page. */
  private defaultRedirect(environment: Environment): URL {
    return new URL(`/hosted/${environment.id}/accept-invitation`, this.options.baseUrl);
  }

  async create(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    input: { email: string; role: string; redirectUrl?: string | undefined; expiresInDays?: number | undefined },
  ): Promise<Invitation> {
    const email = normalizeEmail(input.email);
    const key = emailKey(email);
    const redirect =
      input.redirectUrl === undefined ? this.defaultRedirect(environment) : validateRedirectUrl(environment, input.redirectUrl);
    const token = newSecret('', 32);
    const now = this.options.now();
    const expiresAt = now + (input.expiresInDays ?? DEFAULT_EXPIRY_DAYS) * DAY_MS;

    const invitation = await this.options.access.withOrganization(environment, actor, organizationId, async (tx, org, membership) => {
      // Permission first: without it, a caller learns nothing, not even which roles exist.
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Inviting members');
      const role = await this.options.access.assignableRole(tx, environment.id, input.role);
      if (membership) await this.options.access.assertWithinOwnRights(tx, environment.id, membership, role);
      const user = await this.options.identity.findUserByEmail(tx, environment, email);
      if (user && (await findMembership(tx, environment.id, organizationId, user.id))) {
        throw apiError('conflict', `${email} is already a member of this organization; change their role on the member instead.`, {
          fields: ['email'],
        });
      }
      if ((await q.countInvitationsSentSince(tx, environment.id, organizationId, now - 3_600_000)) >= INVITATIONS_PER_HOUR) {
        throw new ApiError(
          'rate_limited',
          `This organization has sent ${INVITATIONS_PER_HOUR} invitations in the last hour, the most it may. Try again later, or add people who already have accounts as members directly.`,
          undefined,
          { 'retry-after': '3600' },
        );
      }
      // A refused email must not rotate the token: the link the invitee already has stays the newest.
      if (await this.options.mail.throttled(tx, environment, email, now)) {
        throw new ApiError(
          'rate_limited',
          `${email} has had its share of email for now (5 in 10 minutes). The invitation link already sent still works; invite again in a few minutes.`,
          undefined,
          { 'retry-after': '600' },
        );
      }
      const fields = {
        token_hash: sha256Hex(token),
        role,
        redirect_url: redirect.href,
        inviter_user_id: actor.kind === 'member' ? actor.userId : null,
        expires_at: expiresAt,
        sent_at: now,
        updated_at: now,
      };
      const pending = await q.findPendingInvitation(tx, environment.id, organizationId, key);
      let row: q.InvitationRow;
      if (pending) {
        await q.refreshInvitation(tx, environment.id, pending.id, fields);
        row = { ...pending, ...fields };
      } else {
        row = {
          environment_id: environment.id,
          id: newId('orginv', environment.id),
          organization_id: organizationId,
          email,
          email_key: key,
          status: 'pending',
          accepted_user_id: null,
          created_at: now,
          ...fields,
        };
        await q.insertInvitation(tx, environment.id, row, now);
      }
      const content = { organizationName: org.name, link: linkWithToken(redirect, token), expiresInMinutes: Math.round((expiresAt - now) / 60_000) };
      await this.options.mail.send(tx, environment, 'organization_invitation', email, content, { now, throttled: false });
      return row;
    });
    return invitationView(invitation, now);
  }

  async list(environment: Environment, actor: Actor, organizationId: string, status: string | undefined): Promise<Invitation[]> {
    const now = this.options.now();
    const rows = await inTransaction(this.db, async (tx) => {
      if (actor.kind === 'member') {
        // Who was invited is the members' business: reading it takes the same permission as inviting.
        const membership = await this.options.access.liveMembership(tx, environment.id, organizationId, actor.userId);
        requirePermission(membership, PERMISSIONS.membersManage, 'Listing invitations');
      } else if (!(await findOrganization(tx, environment.id, organizationId))) {
        throw apiError('not_found', `Organization ${organizationId} was not found in this environment.`);
      }
      return q.listInvitations(tx, environment.id, organizationId, { status, now, limit: LIST_LIMIT });
    });
    return rows.map((row) => invitationView(row, now));
  }

  async revoke(environment: Environment, actor: Actor, organizationId: string, invitationId: string): Promise<Invitation> {
    return this.options.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Revoking invitations');
      const row = await q.findInvitation(tx, environment.id, organizationId, invitationId);
      if (!row) throw invitationNotFound(invitationId);
      // Revoking an invitation to a role is changing who may hold it.
      if (membership) await this.options.access.assertWithinOwnRights(tx, environment.id, membership, row.role);
      const now = this.options.now();
      if (row.status === 'revoked') return invitationView(row, now);
      if (row.status === 'accepted') throw unusable('accepted');
      const revoked = await q.settleInvitation(tx, environment.id, row.id, { status: 'revoked', now });
      return invitationView(revoked!, now);
    });
  }

  /** GET /v1/me/invitations: only for a verified address, so typing someone's email at sign-up shows nothing. */
  async listForUser(environment: Environment, userId: string): Promise<UserInvitation[]> {
    const user = await this.options.identity.findUser(this.db, environment, userId);
    if (!user || user.email_verified !== 1) return [];
    const now = this.options.now();
    const rows = await q.listPendingInvitationsFor(this.db, environment.id, user.email_key, now);
    return rows.map((row) =>
      userInvitationView(
        row,
        { id: row.organization_id, name: row.organization_name, slug: row.organization_slug, image_url: row.organization_image_url },
        now,
      ),
    );
  }

  /** POST /v1/me/invitations/{id}/accept: the signed-in invitee, whose verified address the invitation names. */
  async acceptAsUser(environment: Environment, userId: string, invitationId: string): Promise<Member> {
    const invitation = await q.findInvitationById(this.db, environment.id, invitationId);
    const notYours = apiError('not_found', `Invitation ${invitationId} was not found among the invitations addressed to you.`);
    if (!invitation) throw notYours;
    return this.options.access.withOrganization(environment, { kind: 'backend' }, invitation.organization_id, async (tx) => {
      const user = await this.options.identity.findUser(tx, environment, userId);
      if (!user || user.email_key !== invitation.email_key) throw notYours;
      if (user.email_verified !== 1) {
        throw apiError(
          'forbidden',
          'Verify your email address first: sign in once with a magic link or an email code sent to it, or open the link in the invitation email.',
        );
      }
      return this.join(tx, environment, invitation.id, user);
    });
  }

  /**
   * POST /v1/auth/invitations/preview: what the accept page shows first. Only the token's holder
   * (the invitee's mailbox) learns anything, and the address comes back masked, so a link seen over
   * a shoulder or forwarded does not spell it out. Unknown and unusable tokens answer as accepting would.
   */
  async previewWithToken(environment: Environment, token: string): Promise<InvitationPreview> {
    const invitation = await q.findInvitationByTokenHash(this.db, environment.id, sha256Hex(token));
    if (!invitation) throw apiError('invalid_credentials', INVALID_TOKEN);
    const status = invitationStatus(invitation, this.options.now());
    if (status !== 'pending') throw unusable(status);
    const organization = await findOrganization(this.db, environment.id, invitation.organization_id);
    if (!organization) throw apiError('invalid_credentials', INVALID_TOKEN);
    return {
      organization: { id: organization.id, name: organization.name, imageUrl: organization.image_url },
      email: maskEmail(invitation.email),
      role: invitation.role,
      expiresAt: invitation.expires_at,
    };
  }

  /**
   * POST /v1/auth/invitations/accept: the emailed token proves the address, so it finds the account
   * of that address or creates it (even when sign-up is closed), then joins; auth/invitation.ts signs
   * it in. The account is created in the transaction that accepts, so it exists only if the
   * acceptance commits.
   */
  async acceptWithToken(
    environment: Environment,
    input: { token: string; password?: string | undefined; firstName?: string | undefined; lastName?: string | undefined },
  ): Promise<{ user: { id: string; email: string }; organizationId: string }> {
    const invitation = await q.findInvitationByTokenHash(this.db, environment.id, sha256Hex(input.token));
    if (!invitation) throw apiError('invalid_credentials', INVALID_TOKEN);
    const status = invitationStatus(invitation, this.options.now());
    if (status !== 'pending') throw unusable(status);
    // Hashed before the lock: argon2 takes tens of milliseconds.
    const passwordHash = input.password === undefined ? null : await this.options.passwords.acceptPassword(input.password);

    const user = await this.options.access.withOrganization(environment, { kind: 'backend' }, invitation.organization_id, async (tx) => {
      let user = await this.options.identity.findUserByEmail(tx, environment, invitation.email);
      if (user && passwordHash !== null) {
        throw apiError(
          'invalid_request',
          'An account with this address already exists, and accepting signs it in as it is: send the request without "password" (change the password from the profile).',
          { fields: ['password'] },
        );
      }
      // Before joining: a banned user must not become a member on the way to a refused sign-in.
      if (user?.banned === 1) throw userBanned();
      if (user) {
        await this.options.identity.markEmailVerified(tx, environment, user.id);
      } else {
        const profile = { email: invitation.email, firstName: input.firstName, lastName: input.lastName };
        user = await this.options.identity.createVerifiedUserIn(tx, environment, profile, passwordHash);
      }
      await this.join(tx, environment, invitation.id, user, invitation.token_hash);
      return user;
    });
    return { user: { id: user.id, email: user.email }, organizationId: invitation.organization_id };
  }

  /** Inside the organization lock: settles the invitation as accepted and adds the member. */
  private async join(
    tx: Tx,
    environment: Environment,
    invitationId: string,
    user: { id: string; email: string; first_name: string | null; last_name: string | null; image_url: string | null },
    /** For an acceptance by token: its hash, which a renewal since the look-up has replaced. */
    tokenHash?: string,
  ): Promise<Member> {
    const now = this.options.now();
    const row = await q.findInvitationById(tx, environment.id, invitationId);
    if (row && tokenHash !== undefined && row.token_hash !== tokenHash) throw apiError('invalid_credentials', INVALID_TOKEN);
    const status = row ? invitationStatus(row, now) : 'revoked';
    if (!row || status !== 'pending') throw unusable(status);
    const notNeeded = () => apiError('conflict', 'You are already a member of this organization; the invitation is not needed.');
    const role = (await addMembership(
      tx,
      environment.id,
      // The role may have been deleted since the invitation was sent.
      { organizationId: row.organization_id, userId: user.id, role: () => this.options.access.assignableRole(tx, environment.id, row.role), now },
      { alreadyMember: notNeeded },
    ))!;
    if (!(await q.settleInvitation(tx, environment.id, row.id, { status: 'accepted', acceptedUserId: user.id, now })))
      throw unusable('accepted');
    return memberView({ ...user, user_id: user.id, role, created_at: now });
  }
}
