import type { Reverified, ReverifyBody } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { verifyPassword } from '../identity/passwords.js';
import type { IdentityService } from '../identity/service.js';
import { ApiError, apiError, notFound } from '../lib/errors.js';
import { sessionAttempt, type PasskeyCeremonies } from '../passkeys/ceremonies.js';
import { PASSWORD_ACCOUNT } from '../ratelimit/throttle-policies.js';
import type { SignInThrottle } from '../ratelimit/throttle.js';
import { parseAmr, type Amr, type SessionFactors } from '../sessions/factors.js';
import type { RequestContext, SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';

type Db = Kysely<Database> | Transaction<Database>;

/** How long a verification lets a session make sensitive changes (docs/mfa.md, "Reverification"). */
export const REVERIFICATION_WINDOW_MS = 10 * 60_000;

/** The signed-in caller: a user and the session the request came with. */
export interface Caller {
  userId: string;
  sessionId: string;
}

export interface ReverificationOptions {
  store: Store;
  sessions: Pick<SessionService, 'recordFactor' | 'reissue' | 'lastVerification'>;
  identity: Pick<IdentityService, 'findUser'>;
  throttle: SignInThrottle;
  now: () => number;
  passkeys?: Pick<PasskeyCeremonies, 'authenticationOptions' | 'verifyAuthentication'> | undefined;
  /** The TOTP and backup-code check, with its allowance (MfaService.verifySecondFactor). */
  codes: {
    verifySecondFactor(environment: Environment, userId: string, input: { factor: 'totp' | 'backup_code'; code: string }): Promise<Amr>;
  };
}

const WRONG_PASSWORD = 'The password is incorrect.';

function passwordLocked(seconds: number): string {
  return `Too many failed password attempts for this account; wait ${seconds} seconds before trying again.`;
}

function reverificationRequired(): ApiError {
  return apiError(
    'reverification_required',
    'This change needs a recent verification: confirm it is you with POST /v1/me/reverify (your password, an authenticator code, a backup code or a passkey), then retry within 10 minutes.',
  );
}

/**
 * Reverification (`POST /v1/me/reverify`) and the 10-minute rule that disabling TOTP, replacing
 * backup codes, deleting a passkey, creating an API key and deleting one's account ask of the session.
 */
export class Reverification {
  constructor(private readonly options: ReverificationOptions) {}

  /**
   * POST /v1/me/reverify: the session verifies a factor now (added to its amr) and gets a new access
   * token whose `fva` says so; the refresh token is unchanged.
   */
  async reverify(environment: Environment, caller: Caller, body: ReverifyBody, context: RequestContext): Promise<Reverified> {
    const given = (['password', 'code', 'backupCode', 'passkey'] as const).filter((field) => body[field] !== undefined);
    if (given.length !== 1) {
      throw apiError('invalid_request', 'Send exactly one of "password", "code" (an authenticator code), "backupCode" or "passkey".', {
        fields: given.length === 0 ? ['password', 'code', 'backupCode', 'passkey'] : given,
      });
    }
    let factor: Amr;
    if (body.password !== undefined) {
      await this.checkPassword(environment, caller.userId, body.password);
      factor = 'pwd';
    } else if (body.passkey !== undefined) {
      if (!this.options.passkeys) throw apiError('invalid_request', 'Passkeys are not available on this server.');
      // Bound to this session's latest reverify options and to this user's credentials.
      await this.options.passkeys.verifyAuthentication(
        environment,
        sessionAttempt('reverify', caller.sessionId),
        body.passkey,
        caller.userId,
      );
      factor = 'passkey';
    } else if (body.code !== undefined) {
      factor = await this.options.codes.verifySecondFactor(environment, caller.userId, { factor: 'totp', code: body.code });
    } else {
      factor = await this.options.codes.verifySecondFactor(environment, caller.userId, { factor: 'backup_code', code: body.backupCode! });
    }
    if (!(await this.options.sessions.recordFactor(environment, caller.userId, caller.sessionId, factor))) {
      throw new ApiError('session_revoked', 'This session is no longer live, so it cannot be reverified. Sign in again.');
    }
    return { session: await this.options.sessions.reissue(environment, caller.userId, caller.sessionId, context) };
  }

  /** POST /v1/me/reverify/passkey-options: a challenge for one of the user's own passkeys. */
  async passkeyOptions(environment: Environment, caller: Caller, requestOrigin: string | undefined) {
    if (!this.options.passkeys) throw apiError('invalid_request', 'Passkeys are not available on this server.');
    if ((await q.countPasskeys(this.options.store.db, environment.id, caller.userId)) === 0) {
      throw apiError('invalid_request', 'This account has no passkey; reverify with a password, an authenticator code or a backup code.');
    }
    const { options } = await this.options.passkeys.authenticationOptions(
      environment,
      { attemptId: sessionAttempt('reverify', caller.sessionId), userId: caller.userId },
      requestOrigin,
    );
    return { options };
  }

  /**
   * The 10-minute rule, read from the session's live record (never from the token): the session's
   * most recent verification of any factor must be within the window, else 403
   * reverification_required. An actor session may not make these changes at all.
   */
  async requireRecentVerification(environment: Environment, caller: Caller, db: Db = this.options.store.db): Promise<void> {
    const factors = await this.options.sessions.lastVerification(environment, caller.userId, caller.sessionId, db);
    if (!factors) throw new ApiError('session_revoked', 'This session is no longer live. Sign in again.');
    if (parseAmr(factors.amr).includes('actor')) {
      throw apiError('forbidden', 'A session started with an actor token cannot make this change.');
    }
    if (!this.withinWindow(factors)) throw reverificationRequired();
  }

  /** Whether the caller's session verified a factor within the window (no actor check: for enrolment's own rule). */
  async recentlyVerified(environment: Environment, caller: Caller): Promise<boolean> {
    const factors = await this.options.sessions.lastVerification(environment, caller.userId, caller.sessionId);
    return factors !== undefined && this.withinWindow(factors);
  }

  private withinWindow(factors: SessionFactors): boolean {
    const last = Math.max(factors.first_factor_at ?? -Infinity, factors.second_factor_at ?? -Infinity);
    return this.options.now() - last <= REVERIFICATION_WINDOW_MS;
  }

  private async checkPassword(environment: Environment, userId: string, password: string): Promise<void> {
    const user = await this.options.identity.findUser(this.options.store.db, environment, userId);
    if (!user) throw notFound(`User ${userId}`);
    // Counted with the password sign-ins of the account: a stolen session guesses no faster here.
    await this.options.throttle.guard(environment.id, [{ policy: PASSWORD_ACCOUNT, subject: user.email_key }], passwordLocked, async () => {
      if (!(await verifyPassword(user.password_hash, password, environment.id))) {
        throw apiError(
          'invalid_credentials',
          user.password_hash === null
            ? 'This account has no password; reverify with an authenticator code or a backup code.'
            : WRONG_PASSWORD,
          { fields: ['password'] },
        );
      }
    });
  }
}
