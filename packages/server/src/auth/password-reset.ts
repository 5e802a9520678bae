import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { emailKey } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import type { PasswordService } from '../identity/password-service.js';
import { constantTimeEqual, sha256Hex } from '../lib/crypto.js';
import { apiError, userBanned } from '../lib/errors.js';
import { PASSWORD_ACCOUNT, RESET_CLIENT } from '../ratelimit/throttle-policies.js';
import { clientSubject, type SignInThrottle } from '../ratelimit/throttle.js';
import type { SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import { INVALID_LINK, passwordFingerprint, requireMethod, requireSignUp, type EmailedSecrets } from './emailed-secrets.js';
import * as q from './queries.js';

function resetsLocked(seconds: number): string {
  return `Too many invalid password-reset links from this network; wait ${seconds} seconds before trying again, then use the newest link you received.`;
}

export interface PasswordResetOptions {
  store: Store;
  identity: Pick<IdentityService, 'findUser' | 'findUserByEmail' | 'createOrFindVerified' | 'markEmailVerified'>;
  passwords: Pick<PasswordService, 'checkPassword' | 'hashPassword' | 'setPasswordHash'>;
  /** A reset revokes every session of the user. */
  sessions: Pick<SessionService, 'revokeAllForUser'>;
  secrets: EmailedSecrets;
  now: () => number;
  throttle: SignInThrottle;
}

/** Password reset by an emailed link: no session, but every session of the account goes. */
export class PasswordResetFlow {
  constructor(private readonly options: PasswordResetOptions) {}

  async start(environment: Environment, input: { email: string; redirectUrl: string }): Promise<void> {
    requireMethod(environment, 'password');
    await this.options.secrets.startLinkFlow(environment, input, 'password_reset', { known: 'password_reset', unknown: 'sign_up_link' });
  }

  /** Sets the new password and revokes every session of the user. */
  async complete(
    environment: Environment,
    input: { token: string; newPassword: string },
    clientAddress: string,
  ): Promise<{ reset: true; sessionsRevoked: number }> {
    requireMethod(environment, 'password');
    this.options.passwords.checkPassword(input.newPassword, 'newPassword');
    const subjects = [{ policy: RESET_CLIENT, subject: clientSubject(clientAddress) }];
    const result = await this.options.throttle.guard(environment.id, subjects, resetsLocked, () => this.reset(environment, input));
    // The mailbox is proven and the password new: failures against the old one no longer matter.
    await this.options.throttle.forget(environment.id, { policy: PASSWORD_ACCOUNT, subject: emailKey(result.email) });
    return { reset: true, sessionsRevoked: result.sessionsRevoked };
  }

  private async reset(
    environment: Environment,
    input: { token: string; newPassword: string },
  ): Promise<{ email: string; sessionsRevoked: number }> {
    const db = this.options.store.db;
    const row = await q.consumeBySecret(db, environment.id, 'password_reset', sha256Hex(input.token), this.options.now());
    if (!row) throw apiError('invalid_credentials', INVALID_LINK);

    // A link sent to an address without an account creates it; if the account appeared meanwhile
    // (another flow, the admin API), the link still proves the mailbox, so it resets that account.
    let userId = row.user_id ?? (await this.options.identity.findUserByEmail(db, environment, row.email))?.id;
    if (userId === undefined) {
      requireSignUp(environment);
      const created = await this.options.identity.createOrFindVerified(environment, row.email, input.newPassword);
      if (created.created) return { email: row.email, sessionsRevoked: 0 };
      userId = created.id;
    }
    const passwordHash = await this.options.passwords.hashPassword(input.newPassword);
    const resetUserId = userId;
    const sessionsRevoked = await inTransaction(db, async (tx) => {
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
      await this.options.passwords.setPasswordHash(tx, environment, resetUserId, passwordHash, this.options.now());
      return revoked;
    });
    return { email: row.email, sessionsRevoked };
  }
}
