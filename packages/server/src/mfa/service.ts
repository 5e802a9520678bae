import type { MfaStatus, TotpEnabled, TotpSetup } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import { inTransaction } from '../db/changes.js';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { deriveSubkey } from '../lib/cursor.js';
import { apiError, notFound } from '../lib/errors.js';
import type { Sealer } from '../lib/sealing.js';
import type { IdentityService } from '../identity/service.js';
import { secondFactorRequired } from '../organizations/access.js';
import { SECOND_FACTOR_USER } from '../ratelimit/throttle-policies.js';
import type { SignInThrottle } from '../ratelimit/throttle.js';
import type { SessionService } from '../sessions/service.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import { backupCodeHash, newBackupCodes } from './backup-codes.js';
import * as q from './queries.js';
import type { PasskeyCeremonies } from '../passkeys/ceremonies.js';
import { SecondFactorWriter, totpBinding } from './factor-writer.js';
import { Reverification, type Caller } from './reverification.js';
import { acceptedStep, base32Encode, newTotpSecret, otpauthUrl } from './totp.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The second factors a user can have, in the order `factors` lists them. */
export type SecondFactor = 'totp' | 'backup_code' | 'passkey';
/** The second factors proven by a typed code. */
export type CodeFactor = Exclude<SecondFactor, 'passkey'>;

export interface MfaServiceOptions {
  store: Store;
  sessions: Pick<SessionService, 'recordFactor' | 'reissue' | 'lastVerification' | 'revokeAllForUser'>;
  identity: Pick<IdentityService, 'findUser' | 'lockUser'>;
  tenancy: Pick<TenancyService, 'getProject'>;
  throttle: SignInThrottle;
  now: () => number;
  instanceSecret: string;
  /** The WebAuthn ceremonies, for reverifying with a passkey. */
  passkeys?: Pick<PasskeyCeremonies, 'authenticationOptions' | 'verifyAuthentication' | 'removeAllIn'> | undefined;
  /** The writer identity was given (the same sealing); by default one of its own. */
  writer?: SecondFactorWriter | undefined;
}

const WRONG_CODE =
  'The code is not right, or it was already used. Enter the current code of your authenticator app (each code works once).';
const WRONG_BACKUP_CODE = 'This backup code is not right, or it was already used. Each backup code works once.';

function codesLocked(seconds: number): string {
  return `Too many wrong codes for this account; wait ${seconds} seconds before trying again. A backup code counts as a code too.`;
}

/**
 * TOTP enrolment and removal, backup codes, the admin reset, and the second-factor check of the
 * sign-in step (`verifySecondFactor`, `factorsOf`). Reverification and the 10-minute rule that
 * sensitive changes check are in `reverification` (mfa/reverification.ts).
 */
export class MfaService {
  private readonly sealer: Sealer;
  private readonly writer: SecondFactorWriter;
  private readonly codeKey: Buffer;
  readonly reverification: Reverification;

  constructor(private readonly options: MfaServiceOptions) {
    this.writer = options.writer ?? new SecondFactorWriter(options.instanceSecret, options.now, options.passkeys);
    this.sealer = this.writer.sealer;
    this.codeKey = deriveSubkey(options.instanceSecret, 'backup-codes');
    const { store, sessions, identity, throttle, now, passkeys } = options;
    this.reverification = new Reverification({ store, sessions, identity, throttle, now, passkeys, codes: this });
  }

  private get db() {
    return this.options.store.db;
  }

  private now(): number {
    return this.options.now();
  }

  private binding(environment: Environment, userId: string): string {
    return totpBinding(environment, userId);
  }

  private hash(environment: Environment, userId: string, code: string): string {
    return backupCodeHash(this.codeKey, environment.id, userId, code);
  }

  /** Counts the attempt against the user's second-factor allowance; a wrong code stays counted. */
  private guarded<T>(environment: Environment, userId: string, work: () => Promise<T>): Promise<T> {
    return this.options.throttle.guard(environment.id, [{ policy: SECOND_FACTOR_USER, subject: userId }], codesLocked, work);
  }

  /**
   * Every transaction that changes a user's second factors takes the user's row first, then the
   * factor tables: one order everywhere, so two of them (a sign-in's setup and the settings page; a
   * removal and a support reset) wait for each other rather than deadlock on PostgreSQL.
   */
  private async lockUserFirst(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> {
    if (!(await this.options.identity.lockUser(tx, environment, userId))) throw notFound(`User ${userId}`);
  }

  private assertEnrolmentOpen(environment: Environment): void {
    if (environment.settings.mfa === 'off') {
      throw apiError('method_disabled', 'Second factors are turned off for this environment (mfa is "off"), so TOTP cannot be enabled.');
    }
  }

  // ---- what the user has

  /** The user's second factors, in the order `needs_second_factor` lists them. */
  async factorsOf(environment: Environment, userId: string, db: Db = this.db): Promise<SecondFactor[]> {
    const [totp, remaining, passkeys] = await Promise.all([
      q.findTotp(db, environment.id, userId),
      q.countUnusedBackupCodes(db, environment.id, userId),
      q.countPasskeys(db, environment.id, userId),
    ]);
    const factors: SecondFactor[] = [];
    if (totp?.secret != null) factors.push('totp');
    if (remaining > 0) factors.push('backup_code');
    if (passkeys > 0) factors.push('passkey');
    return factors;
  }

  async status(environment: Environment, userId: string): Promise<MfaStatus> {
    const [totp, remaining, passkeys] = await Promise.all([
      q.findTotp(this.db, environment.id, userId),
      q.countUnusedBackupCodes(this.db, environment.id, userId),
      q.countPasskeys(this.db, environment.id, userId),
    ]);
    const enabled = totp?.secret != null;
    return {
      totp: enabled ? { enabled, createdAt: totp!.enabled_at ?? totp!.created_at } : { enabled },
      backupCodes: { remaining },
      passkeys,
    };
  }

  // ---- enrolment

  /** POST /v1/me/mfa/totp: a new pending secret (replacing a pending one) until a code confirms it. */
  async startTotp(environment: Environment, userId: string): Promise<TotpSetup> {
    this.assertEnrolmentOpen(environment);
    const user = await this.options.identity.findUser(this.db, environment, userId);
    if (!user) throw notFound(`User ${userId}`);
    const existing = await q.findTotp(this.db, environment.id, userId);
    if (existing?.secret != null) {
      throw apiError(
        'conflict',
        'TOTP is already enabled for this account. Remove it first (DELETE /v1/me/mfa/totp) to set up another authenticator.',
      );
    }
    const secret = newTotpSecret();
    await q.putPendingTotp(this.db, environment.id, userId, this.sealer.seal(this.binding(environment, userId), secret), this.now());
    const { project } = await this.options.tenancy.getProject(environment.projectId);
    const encoded = base32Encode(secret);
    return { secret: encoded, otpauthUrl: otpauthUrl(project.name, user.email, encoded) };
  }

  /**
   * POST /v1/me/mfa/totp/verify: the first code confirms the pending secret (spending its step),
   * which enables TOTP with a new set of backup codes. The code also counts as this session's
   * second factor: the user just proved they hold it.
   */
  async confirmTotp(environment: Environment, caller: Caller, code: string): Promise<TotpEnabled> {
    this.assertEnrolmentOpen(environment);
    const { userId } = caller;
    return this.guarded(environment, userId, async () => {
      const backupCodes = await inTransaction(this.db, (tx) =>
        this.enablePendingTotp(tx, environment, userId, code, 'start with POST /v1/me/mfa/totp, then send its code here'),
      );
      // Enrolment proves the authenticator, not who holds the session: it counts as this session's
      // second factor only when the session itself verified a factor in the last 10 minutes (else a
      // stolen, stale session could make itself fresh by enrolling an authenticator of its own).
      if (await this.reverification.recentlyVerified(environment, caller)) {
        await this.options.sessions.recordFactor(environment, userId, caller.sessionId, 'totp');
      }
      return { totp: { enabled: true as const }, backupCodes };
    });
  }

  /**
   * The setup step of a sign-in under mfa "required" (auth/second-factor.ts): the code confirms the
   * pending secret from `…/totp-setup`, in the caller's transaction (which spends the attempt).
   * Counted against the user's allowance like every code.
   */
  enrolTotpAtSignIn(environment: Environment, userId: string, code: string, tx: Transaction<Database>): Promise<string[]> {
    this.assertEnrolmentOpen(environment);
    return this.guarded(environment, userId, () =>
      this.enablePendingTotp(tx, environment, userId, code, 'start with POST /v1/auth/signin/second-factor/totp-setup, then send its code'),
    );
  }

  /** Confirms the pending secret with `code` (spending its step): TOTP on, with a new set of backup codes. */
  private async enablePendingTotp(
    tx: Transaction<Database>,
    environment: Environment,
    userId: string,
    code: string,
    start: string,
  ): Promise<string[]> {
    await this.lockUserFirst(tx, environment, userId);
    const row = await q.findTotp(tx, environment.id, userId);
    if (row?.secret != null) throw apiError('conflict', 'TOTP is already enabled for this account.');
    if (!row?.pending_secret) throw apiError('invalid_request', `No TOTP setup is pending for this account: ${start}.`);
    const pending = row.pending_secret;
    const step = acceptedStep(this.sealer.open(this.binding(environment, userId), pending), code, this.now(), row.last_step);
    if (step === undefined || !(await q.claimStep(tx, environment.id, userId, step))) throw apiError('invalid_credentials', WRONG_CODE);
    if (!(await q.enableTotp(tx, environment.id, userId, pending, this.now()))) {
      throw apiError('conflict', 'A newer TOTP setup replaced this secret. Scan the latest QR code and send its code.');
    }
    const backupCodes = newBackupCodes();
    const hashes = backupCodes.map((c) => this.hash(environment, userId, c));
    await q.replaceBackupCodes(tx, environment.id, userId, hashes, this.now());
    await q.secondFactorsChanged(tx, environment.id, userId, this.now());
    return backupCodes;
  }

  /** DELETE /v1/me/mfa/totp (reverification). The last second factor takes the backup codes with it. */
  async removeTotp(environment: Environment, caller: Caller): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      await this.reverification.requireRecentVerification(environment, caller, tx);
      await this.lockUserFirst(tx, environment, caller.userId);
      if (!(await q.deleteTotp(tx, environment.id, caller.userId))) throw notFound('TOTP of this account');
      if ((await q.countPasskeys(tx, environment.id, caller.userId)) === 0) await q.deleteBackupCodes(tx, environment.id, caller.userId);
      await q.secondFactorsChanged(tx, environment.id, caller.userId, this.now());
    });
  }

  /** POST /v1/me/mfa/backup-codes (reverification): a new set of 10; the old ones stop working. */
  async regenerateBackupCodes(environment: Environment, caller: Caller): Promise<{ backupCodes: string[] }> {
    const backupCodes = newBackupCodes();
    await inTransaction(this.db, async (tx) => {
      await this.reverification.requireRecentVerification(environment, caller, tx);
      await this.lockUserFirst(tx, environment, caller.userId);
      const totp = await q.findTotp(tx, environment.id, caller.userId);
      if (totp?.secret == null) {
        throw apiError(
          'conflict',
          'Backup codes back up a second factor, and this account has none: enable TOTP first (POST /v1/me/mfa/totp).',
        );
      }
      const hashes = backupCodes.map((c) => this.hash(environment, caller.userId, c));
      await q.replaceBackupCodes(tx, environment.id, caller.userId, hashes, this.now());
      await q.secondFactorsChanged(tx, environment.id, caller.userId, this.now());
    });
    return { backupCodes };
  }

  // ---- checking a code

  /** Whether `code` is right for the user's enabled TOTP at a step not used yet; spends that step. */
  private async totpAccepted(environment: Environment, userId: string, code: string, db: Db): Promise<boolean> {
    const row = await q.findTotp(db, environment.id, userId);
    if (row?.secret == null) return false;
    const step = acceptedStep(this.sealer.open(this.binding(environment, userId), row.secret), code, this.now(), row.last_step);
    return step !== undefined && (await q.claimStep(db, environment.id, userId, step));
  }

  /**
   * The second-factor check of the sign-in step (and of reverification): a TOTP code or a backup
   * code, each accepted once, counted against the user's allowance (429 past it, before any
   * comparison). A wrong code is `401 invalid_credentials`. `db` may be the caller's transaction.
   * A passkey is a ceremony of its own (passkeys/ceremonies.ts).
   */
  async verifySecondFactor(
    environment: Environment,
    userId: string,
    input: { factor: CodeFactor; code: string },
    db: Db = this.db,
  ): Promise<CodeFactor> {
    return this.guarded(environment, userId, async () => {
      if (input.factor === 'totp') {
        if (!(await this.totpAccepted(environment, userId, input.code, db))) throw apiError('invalid_credentials', WRONG_CODE);
        return 'totp';
      }
      const spent = await q.consumeBackupCode(db, environment.id, userId, this.hash(environment, userId, input.code), this.now());
      if (!spent) throw apiError('invalid_credentials', WRONG_BACKUP_CODE);
      return 'backup_code';
    });
  }

  // ---- organizations

  /**
   * `/v1/me/organization` and everything under it: when the organization the session acts as
   * requires MFA, the session must have verified a second factor.
   */
  async assertOrganizationAccess(environment: Environment, sessionId: string): Promise<void> {
    // "off" asks for no second factor anywhere, whatever an organization was set to while it was on.
    if (environment.settings.mfa === 'off') return;
    const policy = await q.sessionOrganizationPolicy(this.db, environment.id, sessionId);
    if (policy && policy.mfa_required === 1 && policy.second_factor_at === null) throw secondFactorRequired();
  }

  // ---- operators, import, takeover defence

  /** DELETE /v1/users/{userId}/mfa: every second factor goes (a support reset) and every session. */
  async resetUser(environment: Environment, userId: string): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      if (!(await this.options.identity.lockUser(tx, environment, userId))) throw notFound(`User ${userId}`);
      await this.removeAllIn(tx, environment, userId);
      await this.options.sessions.revokeAllForUser(environment, userId, undefined, tx);
    });
  }

  /** Removes every second factor of the user in the caller's transaction (reset; an address proven for the first time). */
  removeAllIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> {
    return this.writer.removeAllIn(tx, environment, userId);
  }

  /** An imported TOTP secret (base32, checked by identity), enabled at once; no backup codes are made. */
  storeImportedTotp(tx: Transaction<Database>, environment: Environment, userId: string, totpSecret: string): Promise<void> {
    return this.writer.storeImportedTotp(tx, environment, userId, totpSecret);
  }
}
