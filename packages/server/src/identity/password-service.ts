import type { Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import type { Database } from '../db/schema.js';
import { apiError, notFound } from '../lib/errors.js';
import type { ProofWrites } from '../sessions/proof-writes.js';
import type { SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import { parseEmail } from './email.js';
import { needsRehash } from './password-digests.js';
import { assertAcceptablePassword } from './password-policy.js';
import { hashPassword, verifyPassword } from './passwords.js';
import * as q from './queries.js';

const INVALID_CREDENTIALS = 'The email or password is incorrect.';
const PASSWORD_CHANGED =
  "This account's password changed while you were signing in, and its sessions were signed out. Sign in with the new password.";

export interface PasswordServiceOptions {
  store: Store;
  /** A changed password revokes the user's other sessions. */
  sessions: Pick<SessionService, 'revokeAllForUser'>;
  now: () => number;
}

/**
 * Every password rule, in one place: the policy, argon2id hashing, sign-in's check (with the rehash
 * of an imported digest), the change from a session, and the reset's new hash. Other folders call
 * these; none hashes or checks a password itself.
 */
export class PasswordService {
  constructor(private readonly options: PasswordServiceOptions) {}

  private get db() {
    return this.options.store.db;
  }

  /**
   * The one password rule for a new password (sign-up, reset, invitation): the policy (400 naming
   * `field`), checked before anything is spent or stored.
   */
  checkPassword(password: string, field?: string): void {
    assertAcceptablePassword(password, field);
  }

  /** argon2id, as every stored password is. Hash before taking a lock: it takes tens of milliseconds. */
  hashPassword(password: string): Promise<string> {
    return hashPassword(password);
  }

  /** checkPassword, then hashPassword. */
  async acceptPassword(password: string, field?: string): Promise<string> {
    this.checkPassword(password, field);
    return this.hashPassword(password);
  }

  /**
   * The user whose password this is (auth/password.ts, under its throttle). An unknown email, a
   * user without a password and a wrong password all do the same argon2 work and give the same
   * 401 invalid_credentials. An imported digest that proved right becomes argon2id now.
   *
   * With the user, the proof to run where the sign-in's session (or second-factor attempt) is
   * written: the hash just verified must still be theirs then. A reset or change that commits while
   * the hash is checked (tens of milliseconds) revokes every session and attempt; one written after
   * it on the old password would survive it (test/auth/password-race.security.test.ts).
   */
  async authenticate(
    environment: Environment,
    input: { email: string; password: string },
  ): Promise<{ row: q.UserRow; proof: ProofWrites }> {
    const parsed = parseEmail(input.email);
    const row = 'email' in parsed ? await q.findUserByEmail(this.db, environment.id, parsed.email) : undefined;
    const ok = await verifyPassword(row?.password_hash, input.password, environment.id);
    if (!row || !ok || !row.password_hash) throw apiError('invalid_credentials', INVALID_CREDENTIALS);
    let hash = row.password_hash;
    if (needsRehash(hash)) hash = await this.rehash(environment, row.id, hash, input.password);
    const proof: ProofWrites = {
      writes: [q.passwordUnchanged(this.db, environment.id, row.id, hash)],
      refusal: () => apiError('invalid_credentials', PASSWORD_CHANGED),
    };
    return { row, proof };
  }

  /**
   * An imported digest (or an older argon2 cost) proved right: the password becomes argon2id now.
   * Compare-and-set on the old hash, so a password changed meanwhile is never overwritten. Answers
   * the hash the sign-in's proof is to find: the new one; when another sign-in with the same
   * password rehashed first, the one it wrote; else (the password changed) the old one, which the
   * proof then refuses.
   */
  private async rehash(environment: Environment, userId: string, oldHash: string, password: string): Promise<string> {
    const passwordHash = await hashPassword(password);
    if (await q.replacePasswordHash(this.db, environment.id, userId, oldHash, passwordHash)) return passwordHash;
    const current = (await q.findUser(this.db, environment.id, userId))?.password_hash;
    return current && (await verifyPassword(current, password, environment.id)) ? current : oldHash;
  }

  /**
   * POST /v1/me/password. The current password is required even with a valid session (a stolen
   * access token must not be enough to take the account over). Every other session is revoked.
   */
  async changePassword(
    environment: Environment,
    identity: { userId: string; sessionId: string },
    input: { currentPassword?: string | undefined; newPassword: string },
  ): Promise<{ changed: true; otherSessionsRevoked: number }> {
    if (input.currentPassword === undefined || input.currentPassword === '') {
      throw apiError(
        'invalid_credentials',
        'Field "currentPassword" is required to change the password, even with a valid session: send the current password along with newPassword.',
        { fields: ['currentPassword'] },
      );
    }
    const row = await q.findUser(this.db, environment.id, identity.userId);
    if (!row) throw notFound(`User ${identity.userId}`);
    if (!(await verifyPassword(row.password_hash, input.currentPassword, environment.id))) {
      throw apiError(
        'invalid_credentials',
        row.password_hash === null
          ? 'This account has no password yet, so it cannot be changed here; set one through the password reset flow.'
          : 'The current password is incorrect.',
        { fields: ['currentPassword'] },
      );
    }
    assertAcceptablePassword(input.newPassword, 'newPassword');
    const passwordHash = await hashPassword(input.newPassword);
    const otherSessionsRevoked = await inTransaction(this.db, async (tx) => {
      await q.updateUser(tx, environment.id, identity.userId, { password_hash: passwordHash, updated_at: this.options.now() });
      return this.options.sessions.revokeAllForUser(environment, identity.userId, identity.sessionId, tx);
    });
    return { changed: true, otherSessionsRevoked };
  }

  /** Sets a new password hash in the caller's transaction (password reset), without the checks of a change. */
  async setPasswordHash(
    tx: Transaction<Database>,
    environment: Environment,
    userId: string,
    passwordHash: string,
    now: number,
  ): Promise<void> {
    await q.updateUser(tx, environment.id, userId, { password_hash: passwordHash, updated_at: now });
  }
}
