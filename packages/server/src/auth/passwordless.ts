import type { SignedIn } from '@gatehouse/contract';
import { createHmac, randomInt } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import type { FlowTokensTable } from '../db/schema.js';
import { ApiError, apiError, userBanned } from '../lib/errors.js';
import { emailKey, normalizeEmail } from '../identity/email.js';
import { assertAcceptablePassword } from '../identity/password-policy.js';
import { hashPassword } from '../identity/passwords.js';
import type { IdentityService } from '../identity/service.js';
import { constantTimeEqual, newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { EMAIL_CODE_ACCOUNT, EMAIL_CODE_CLIENT, overAllowance, PASSWORD_ACCOUNT, RESET_CLIENT } from '../ratelimit/throttle-policies.js';
import { clientSubject, SignInThrottle } from '../ratelimit/throttle.js';
import type { RequestContext } from '../http/request-context.js';
import type { SessionService } from '../sessions/service.js';
import type { SignInDoor } from './door.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment, EnvironmentSettings } from '../tenancy/settings.js';
import { enqueueEmail, isThrottled } from '../flows/outbox.js';
import * as q from '../flows/queries.js';
import { linkWithToken, validateRedirectUrl } from '../flows/redirect.js';
import { renderEmail, type EmailKind } from '../flows/templates.js';

export const FLOW_TTL_MS = 10 * 60_000;
export const MAX_CODE_ATTEMPTS = 5;

type FlowToken = Selectable<FlowTokensTable>;

export type { SignedIn };

export interface FlowServiceOptions {
  store: Store;
  identity: IdentityService;
  /** Password resets revoke every session of the user. */
  sessions: Pick<SessionService, 'revokeAllForUser'>;
  door: Pick<SignInDoor, 'completeSignIn'>;
  tenancy: TenancyService;
  now: () => number;
  /** HMAC key for stored email codes. */
  codeKey: Buffer;
  /** Called after a message was committed, so the worker sends it soon. */
  wake: () => void;
  /** Sign-in throttling, shared with password sign-in; by default a per-node one on the real clock. */
  throttle?: SignInThrottle | undefined;
}

const METHOD_NAMES: Record<keyof EnvironmentSettings['authMethods'], string> = {
  password: 'Password authentication (and so password reset)',
  magicLink: 'Magic-link sign-in',
  emailCode: 'Email-code sign-in',
  sso: 'Single sign-on',
};

function requireMethod(environment: Environment, method: keyof EnvironmentSettings['authMethods']): void {
  if (!environment.settings.authMethods[method]) {
    throw apiError(
      'method_disabled',
      `${METHOD_NAMES[method]} is disabled for this environment. Enable it in the environment settings, or use another method.`,
    );
  }
}

function passwordFingerprint(passwordHash: string | null): string {
  return sha256Hex(passwordHash ?? 'no-password');
}

const INVALID_LINK = 'This link is invalid, expired or already used. Request a new one.';

function codesLocked(seconds: number): string {
  return `Too many wrong or expired email codes from this network; wait ${seconds} seconds before trying again, or sign in with a magic link.`;
}

function resetsLocked(seconds: number): string {
  return `Too many invalid password-reset links from this network; wait ${seconds} seconds before trying again, then use the newest link you received.`;
}

/**
 * Magic links, email codes and password resets. Starting a flow answers the same whatever the
 * address: every path writes one token and one outbox row in one transaction, and only the row's
 * status differs (sent, captured, or suppressed when there is no account and no sign-up).
 */
export class FlowService {
  private readonly throttle: SignInThrottle;

  constructor(private readonly options: FlowServiceOptions) {
    this.throttle = options.throttle ?? new SignInThrottle({ clock: Date.now });
  }

  private get db() {
    return this.options.store.db;
  }

  private codeHash(tokenId: string, code: string): string {
    return createHmac('sha256', this.options.codeKey).update(`${tokenId}:${code}`).digest('hex');
  }

  private async branding(environment: Environment) {
    const { project } = await this.options.tenancy.getProject(environment.projectId);
    // Set by PUT /v1/platform/projects/{id}/logo, after the same checks as any upload.
    return { projectName: project.name, logoUrl: project.logo_url };
  }

  /** Writes the token and its email in one transaction; sends nothing itself. */
  private async issue(
    environment: Environment,
    input: {
      purpose: FlowTokensTable['purpose'];
      email: string;
      secretHash: (tokenId: string) => string;
      kinds: { known: EmailKind; unknown: EmailKind };
      content: { link?: string; code?: string };
    },
  ): Promise<void> {
    const now = this.options.now();
    const branding = await this.branding(environment);
    await inTransaction(this.db, async (tx) => {
      const user = await this.options.identity.findUserByEmail(tx, environment, input.email);
      const throttled = await isThrottled(tx, environment.id, user?.email ?? input.email, now);
      // A throttled request sends nothing, so it must not void the code the person already has:
      // otherwise anyone could keep a victim's emailed code dead. Its own token is born consumed.
      const key = emailKey(input.email);
      if (input.purpose === 'email_code' && !throttled) await q.voidLiveCodes(tx, environment.id, key, now);
      const id = newId('flow', environment.id);
      await q.insertFlowToken(tx, environment.id, {
        id,
        purpose: input.purpose,
        email: input.email,
        email_key: key,
        user_id: user?.id ?? null,
        secret_hash: input.secretHash(id),
        password_fingerprint: user && input.purpose === 'password_reset' ? passwordFingerprint(user.password_hash) : null,
        created_at: now,
        expires_at: now + FLOW_TTL_MS,
        consumed_at: throttled ? now : null,
      });
      const kind = user ? input.kinds.known : input.kinds.unknown;
      const rendered = renderEmail({ kind, ...branding, ...input.content, expiresInMinutes: FLOW_TTL_MS / 60_000 });
      await enqueueEmail(
        tx,
        {
          environment,
          kind,
          to: user?.email ?? input.email,
          rendered,
          deliver: user !== undefined || environment.settings.signUp,
          throttled,
        },
        now,
      );
    });
    this.options.wake();
  }

  async startMagicLink(environment: Environment, input: { email: string; redirectUrl: string }): Promise<void> {
    requireMethod(environment, 'magicLink');
    await this.startLinkFlow(environment, input, 'magic_link', { known: 'magic_link', unknown: 'sign_up_link' });
  }

  /** Magic links and reset links: a 256-bit token, stored hashed, emailed inside the redirect URL. */
  private async startLinkFlow(
    environment: Environment,
    input: { email: string; redirectUrl: string },
    purpose: 'magic_link' | 'password_reset',
    kinds: { known: EmailKind; unknown: EmailKind },
  ): Promise<void> {
    const email = normalizeEmail(input.email);
    const redirect = validateRedirectUrl(environment, input.redirectUrl);
    const secret = newSecret('', 32);
    await this.issue(environment, {
      purpose,
      email,
      secretHash: () => sha256Hex(secret),
      kinds,
      content: { link: linkWithToken(redirect, secret) },
    });
  }

  async verifyMagicLink(environment: Environment, token: string, context: RequestContext): Promise<SignedIn> {
    requireMethod(environment, 'magicLink');
    const row = await q.consumeBySecret(this.db, environment.id, 'magic_link', sha256Hex(token), this.options.now());
    if (!row) throw apiError('invalid_credentials', INVALID_LINK);
    return this.signInOrSignUp(environment, row, context);
  }

  async startEmailCode(environment: Environment, input: { email: string }): Promise<void> {
    requireMethod(environment, 'emailCode');
    const email = normalizeEmail(input.email);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await this.issue(environment, {
      purpose: 'email_code',
      email,
      secretHash: (id) => this.codeHash(id, code),
      kinds: { known: 'email_code', unknown: 'sign_up_code' },
      content: { code },
    });
  }

  /**
   * Counted per client address (locks) and per address (never a lock: past its allowance each code
   * takes one try instead of five), so nobody can keep the owner from using a fresh code.
   */
  async verifyEmailCode(
    environment: Environment,
    input: { email: string; code: string },
    context: RequestContext,
    clientAddress: string,
  ): Promise<SignedIn> {
    requireMethod(environment, 'emailCode');
    const email = normalizeEmail(input.email);
    const subjects = [
      { policy: EMAIL_CODE_CLIENT, subject: clientSubject(clientAddress) },
      { policy: EMAIL_CODE_ACCOUNT, subject: emailKey(email) },
    ];
    return this.throttle.guard(environment.id, subjects, codesLocked, async (ticket) => {
      const now = this.options.now();
      const row = await q.findLiveCode(this.db, environment.id, emailKey(email), now);
      if (!row)
        throw apiError(
          'invalid_credentials',
          'No valid code for this address: it expired, was used, or was replaced by a newer one. Request a new code.',
        );
      if (!constantTimeEqual(row.secret_hash, this.codeHash(row.id, input.code))) {
        const maxAttempts = overAllowance(EMAIL_CODE_ACCOUNT, ticket.count(EMAIL_CODE_ACCOUNT)) ? row.attempts + 1 : MAX_CODE_ATTEMPTS;
        const attempts = await q.recordWrongCode(this.db, environment.id, row.id, maxAttempts, now);
        const left = maxAttempts - (attempts ?? maxAttempts);
        throw apiError(
          'invalid_credentials',
          left > 0
            ? `The code is incorrect; ${left} ${left === 1 ? 'try' : 'tries'} left.`
            : 'The code is incorrect and is now void after too many tries. Request a new code.',
        );
      }
      if (!(await q.consumeCode(this.db, environment.id, row.id, MAX_CODE_ATTEMPTS, now))) {
        throw apiError('invalid_credentials', 'This code is no longer valid. Request a new code.');
      }
      return this.signInOrSignUp(environment, row, context);
    });
  }

  async startPasswordReset(environment: Environment, input: { email: string; redirectUrl: string }): Promise<void> {
    requireMethod(environment, 'password');
    await this.startLinkFlow(environment, input, 'password_reset', { known: 'password_reset', unknown: 'sign_up_link' });
  }

  /** Sets the new password and revokes every session of the user. */
  async completePasswordReset(
    environment: Environment,
    input: { token: string; newPassword: string },
    clientAddress: string,
  ): Promise<{ reset: true; sessionsRevoked: number }> {
    requireMethod(environment, 'password');
    assertAcceptablePassword(input.newPassword, 'newPassword');
    const subjects = [{ policy: RESET_CLIENT, subject: clientSubject(clientAddress) }];
    const result = await this.throttle.guard(environment.id, subjects, resetsLocked, () => this.resetPassword(environment, input));
    // The mailbox is proven and the password new: failures against the old one no longer matter.
    await this.throttle.forget(environment.id, { policy: PASSWORD_ACCOUNT, subject: emailKey(result.email) });
    return { reset: true, sessionsRevoked: result.sessionsRevoked };
  }

  private async resetPassword(
    environment: Environment,
    input: { token: string; newPassword: string },
  ): Promise<{ email: string; sessionsRevoked: number }> {
    const row = await q.consumeBySecret(this.db, environment.id, 'password_reset', sha256Hex(input.token), this.options.now());
    if (!row) throw apiError('invalid_credentials', INVALID_LINK);

    // A link sent to an address without an account creates it; if the account appeared meanwhile
    // (another flow, the admin API), the link still proves the mailbox, so it resets that account.
    let userId = row.user_id ?? (await this.options.identity.findUserByEmail(this.db, environment, row.email))?.id;
    if (userId === undefined) {
      this.requireSignUp(environment);
      const created = await this.createOrFind(environment, row.email, input.newPassword);
      if (created.created) return { email: row.email, sessionsRevoked: 0 };
      userId = created.id;
    }
    const passwordHash = await hashPassword(input.newPassword);
    const resetUserId = userId;
    const sessionsRevoked = await inTransaction(this.db, async (tx) => {
      const user = await this.options.identity.findUser(tx, environment, resetUserId);
      if (!user) throw apiError('invalid_credentials', INVALID_LINK);
      // A banned account is frozen: no new password, no proof of the address, until it is unbanned.
      if (user.banned === 1) throw userBanned();
      if (row.password_fingerprint !== null && !constantTimeEqual(passwordFingerprint(user.password_hash), row.password_fingerprint)) {
        throw apiError('invalid_credentials', 'This reset link is void because the password changed after it was sent. Request a new one.');
      }
      // Every session goes (and is counted) first; then the proof of the address, which removes a
      // password set before it; then the new password, which that removal must not take.
      const revoked = await this.options.sessions.revokeAllForUser(environment, resetUserId, undefined, tx);
      if (user.email_key === row.email_key) await this.options.identity.markEmailVerified(tx, environment, resetUserId);
      await this.options.identity.setPasswordHash(tx, environment, resetUserId, passwordHash, this.options.now());
      return revoked;
    });
    return { email: row.email, sessionsRevoked };
  }

  private requireSignUp(environment: Environment): void {
    if (!environment.settings.signUp) {
      throw apiError('method_disabled', 'Sign-up is disabled for this environment, so this link cannot create an account.');
    }
  }

  /** The account for a verified address: created now if it is new, or the one a race created first. */
  private async createOrFind(
    environment: Environment,
    email: string,
    password?: string,
  ): Promise<{ id: string; email: string; created: boolean }> {
    try {
      const user = await this.options.identity.createUser(environment, {
        email,
        emailVerified: true,
        ...(password === undefined ? {} : { password }),
      });
      return { id: user.id, email: user.email, created: true };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'conflict') throw error;
      const existing = await this.options.identity.findUserByEmail(this.db, environment, email);
      if (!existing) throw error;
      await this.options.identity.markEmailVerified(this.db, environment, existing.id);
      return { id: existing.id, email: existing.email, created: false };
    }
  }

  private async signInOrSignUp(environment: Environment, row: FlowToken, context: RequestContext): Promise<SignedIn> {
    let user: { id: string; email: string };
    if (row.user_id !== null) {
      const found = await this.options.identity.findUser(this.db, environment, row.user_id);
      if (!found) throw apiError('invalid_credentials', INVALID_LINK);
      // Refused before any change: a banned user's link or code must not verify or strip the account.
      if (found.banned === 1) throw userBanned();
      // The message reached the address it was sent to; if the user has changed address since, that proves nothing about the new one.
      if (found.email_key === row.email_key) await this.options.identity.markEmailVerified(this.db, environment, found.id);
      user = { id: found.id, email: found.email };
    } else {
      this.requireSignUp(environment);
      user = await this.createOrFind(environment, row.email);
    }
    const session = await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'email' }, context);
    return { user, session };
  }
}
