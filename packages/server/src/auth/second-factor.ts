import type { PasskeyOptionsAnswer, PasskeySignInOptions, SecondFactorBody, SecondFactorSignedIn, TotpSetup } from '@gatehouse/contract';
import { isUniqueViolation } from '../db/index.js';
import { duplicate } from '../passkeys/ceremonies.js';
import { inTransaction } from '../db/changes.js';
import type { Store } from '../db/index.js';
import type { RequestContext } from '../http/request-context.js';
import type { IdentityService } from '../identity/service.js';
import { sha256Hex } from '../lib/crypto.js';
import { ApiError, apiError } from '../lib/errors.js';
import type { MfaService } from '../mfa/service.js';
import { parseAmr, type Amr } from '../sessions/factors.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './attempt-queries.js';
import type { SignInDoor } from './door.js';
import type { PasskeySecondFactor } from './second-factor-passkey.js';

export interface SecondFactorStepOptions {
  store: Store;
  mfa: Pick<MfaService, 'verifySecondFactor' | 'enrolTotpAtSignIn' | 'startTotp' | 'factorsOf'>;
  identity: Pick<IdentityService, 'lockUser'>;
  door: Pick<SignInDoor, 'completeSecondFactor'>;
  /** Passkeys as the second factor, and set up inside a setup attempt; without them factor "passkey" is 400. */
  passkeys?: PasskeySecondFactor | undefined;
  now: () => number;
}

const START_AGAIN = 'This sign-in attempt is no longer valid: it expired, was completed, or belongs elsewhere. Start the sign-in again.';
const HAS_FACTOR_NOW =
  'This account set up a second factor after this sign-in began, so the sign-in can no longer set one up. Start the sign-in again, and use that factor.';
const TOO_MANY =
  'This sign-in attempt has ended after 5 wrong codes. Start the sign-in again (your password, link or code), then enter a current code.';

/** A wrong code, as opposed to a dead attempt: only these count against the attempt. */
class WrongCode extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

/**
 * The second step of a sign-in (DESIGN "One door to a session"): completes an attempt the door
 * issued, with a TOTP code, a backup code or a passkey, or enrols TOTP or a passkey on a setup
 * attempt. Spends the attempt with a compare-and-set in the transaction that spends the
 * code, so an attempt starts at most one session even under a race.
 */
export class SecondFactorStep {
  constructor(private readonly options: SecondFactorStepOptions) {}

  private get db() {
    return this.options.store.db;
  }

  private async liveAttempt(environment: Environment, attemptId: string): Promise<q.SignInAttemptRow> {
    const id = sha256Hex(attemptId);
    const row = await q.findLiveAttempt(this.db, environment.id, id, this.options.now());
    if (row) return row;
    throw apiError('invalid_credentials', (await q.diedOfWrongTries(this.db, environment.id, id)) ? TOO_MANY : START_AGAIN);
  }

  /** Only a setup attempt may enrol (a password alone never enrols a factor). */
  private async setupAttempt(environment: Environment, attemptId: string): Promise<q.SignInAttemptRow> {
    const attempt = await this.liveAttempt(environment, attemptId);
    if (attempt.kind !== 'setup') {
      throw apiError(
        'invalid_request',
        'This account already has a second factor: complete the sign-in with it (POST /v1/auth/signin/second-factor).',
      );
    }
    if ((await this.options.mfa.factorsOf(environment, attempt.user_id)).length > 0) throw apiError('conflict', HAS_FACTOR_NOW);
    return attempt;
  }

  /**
   * A setup attempt was issued to a user with no second factor; they may have set one up since (in
   * another sign-in, or in a session from before "required"). With their row locked and the attempt
   * spent, in the enrolling transaction, that is checked again: otherwise the password alone would
   * add a factor beside theirs.
   */
  private async stillWithoutFactor(
    tx: Parameters<Parameters<typeof inTransaction>[1]>[0],
    environment: Environment,
    userId: string,
    spend: (tx: Parameters<Parameters<typeof inTransaction>[1]>[0]) => Promise<void>,
  ) {
    if (!(await this.options.identity.lockUser(tx, environment, userId))) throw apiError('invalid_credentials', START_AGAIN);
    // The attempt next (users, then the attempt, then the factor tables): a completion that lost a
    // race for this attempt finds it spent (401), not the winner's factor; a refusal below rolls it back.
    await spend(tx);
    if ((await this.options.mfa.factorsOf(environment, userId, tx)).length > 0) throw apiError('conflict', HAS_FACTOR_NOW);
  }

  /** POST /v1/auth/signin/second-factor/totp-setup */
  async totpSetup(environment: Environment, attemptId: string): Promise<TotpSetup> {
    const attempt = await this.setupAttempt(environment, attemptId);
    return this.options.mfa.startTotp(environment, attempt.user_id);
  }

  private passkeysOrRefuse(): PasskeySecondFactor {
    if (!this.options.passkeys)
      throw apiError('invalid_request', 'Passkeys are not available on this server; use factor "totp" or "backup_code".');
    return this.options.passkeys;
  }

  /** POST /v1/auth/signin/second-factor/passkey-setup: creation options bound to the setup attempt. */
  async passkeySetup(environment: Environment, attemptId: string, origin: string | undefined): Promise<PasskeyOptionsAnswer> {
    const passkeys = this.passkeysOrRefuse();
    const attempt = await this.setupAttempt(environment, attemptId);
    return { options: await passkeys.registrationOptions(environment, { hash: attempt.id, userId: attempt.user_id }, origin) };
  }

  /**
   * POST /v1/auth/passkey/options {attemptId}: request options for the attempt's user's passkeys,
   * bound to the attempt. Any id that is not a live second-factor attempt here is 401, as a spent one.
   */
  async passkeyOptions(environment: Environment, attemptId: string, origin: string | undefined): Promise<PasskeySignInOptions> {
    const passkeys = this.passkeysOrRefuse();
    if (environment.settings.mfa === 'off') throw apiError('invalid_credentials', START_AGAIN);
    const attempt = await this.liveAttempt(environment, attemptId);
    if (attempt.kind === 'setup') {
      throw apiError(
        'invalid_request',
        'This account has no passkey yet: set one up with POST /v1/auth/signin/second-factor/passkey-setup, then send its response.',
      );
    }
    if (!(await this.options.mfa.factorsOf(environment, attempt.user_id)).includes('passkey')) {
      throw apiError('invalid_request', 'This account has no passkey: complete the sign-in with an authenticator code or a backup code.');
    }
    return { attemptId, options: await passkeys.assertionOptions(environment, { hash: attempt.id, userId: attempt.user_id }, origin) };
  }

  /** POST /v1/auth/signin/second-factor */
  async complete(environment: Environment, body: SecondFactorBody, context: RequestContext): Promise<SecondFactorSignedIn> {
    const attempt = await this.liveAttempt(environment, body.attemptId);
    const userId = attempt.user_id;
    const code = this.codeOf(body);
    const spend = async (tx: Parameters<Parameters<typeof inTransaction>[1]>[0]) => {
      if (!(await q.spendSignInAttempt(tx, environment.id, attempt.id, this.options.now())))
        throw apiError('invalid_credentials', START_AGAIN);
    };
    let second: Amr;
    let backupCodes: string[] | undefined;
    // A try is taken before anything is compared; only a wrong code keeps it (a success spends the attempt).
    if (!(await q.takeTry(this.db, environment.id, attempt.id, this.options.now()))) {
      throw apiError('invalid_credentials', (await q.diedOfWrongTries(this.db, environment.id, attempt.id)) ? TOO_MANY : START_AGAIN);
    }
    try {
      if (body.factor === 'passkey') {
        second = 'passkey';
        await this.completeWithPasskey(environment, attempt, body, spend);
      } else if (attempt.kind === 'setup') {
        if (body.factor !== 'totp') {
          throw apiError(
            'invalid_request',
            'Set up a second factor first: POST /v1/auth/signin/second-factor/totp-setup, then send its code with factor "totp" (or …/passkey-setup, then factor "passkey").',
          );
        }
        second = 'totp';
        backupCodes = await inTransaction(this.db, async (tx) => {
          await this.stillWithoutFactor(tx, environment, userId, spend);
          return wrong(this.options.mfa.enrolTotpAtSignIn(environment, userId, code, tx));
        });
      } else {
        const factor = body.factor;
        second = await inTransaction(this.db, async (tx) => {
          const used = await wrong(this.options.mfa.verifySecondFactor(environment, userId, { factor, code }, tx));
          await spend(tx);
          return used;
        });
      }
    } catch (error) {
      if (error instanceof WrongCode) throw error.error;
      await q.giveBackTry(this.db, environment.id, attempt.id);
      throw error;
    }
    const firstFactors = parseAmr(attempt.first_factors) as Amr[];
    const { session, user } = await this.options.door.completeSecondFactor(
      environment,
      { userId, firstFactors, secondFactor: second },
      context,
    );
    return { user: { id: user.id, email: user.email }, session, ...(backupCodes ? { backupCodes } : {}) };
  }

  /**
   * factor "passkey": the assertion for the attempt's challenge and user, then the attempt spent;
   * on a setup attempt the registration, stored in the transaction that spends the attempt.
   */
  private async completeWithPasskey(
    environment: Environment,
    attempt: q.SignInAttemptRow,
    body: SecondFactorBody,
    spend: (tx: Parameters<Parameters<typeof inTransaction>[1]>[0]) => Promise<void>,
  ): Promise<void> {
    const passkeys = this.passkeysOrRefuse();
    const response = body.response;
    if (response === undefined) {
      throw apiError('invalid_request', 'Send the answer of navigator.credentials.get() (or .create() on a setup) as "response".', {
        fields: ['response'],
      });
    }
    const userId = attempt.user_id;
    const bound = { hash: attempt.id, userId };
    if (attempt.kind === 'setup') {
      // A response that does not register counts as a wrong try too: the attempt bounds them.
      const credential = await wrong(passkeys.verifyRegistration(environment, bound, response), true);
      // The user's row before the attempt's, as the TOTP enrolment takes them: two setups racing
      // wait for each other instead of deadlocking.
      await inTransaction(this.db, async (tx) => {
        await this.stillWithoutFactor(tx, environment, userId, spend);
        await passkeys.storeIn(tx, environment, userId, credential);
      }).catch((error: unknown) => {
        throw isUniqueViolation(error) ? duplicate() : error;
      });
      return;
    }
    // The challenge is spent and the use recorded (counter, lastUsedAt) as at a first-factor
    // passkey sign-in; then the attempt, by compare-and-set.
    await wrong(passkeys.verifyAssertion(environment, bound, response));
    await inTransaction(this.db, spend);
  }

  private codeOf(body: SecondFactorBody): string {
    if (body.factor === 'passkey') return '';
    if (body.code === undefined)
      throw apiError('invalid_request', `Send the ${body.factor === 'totp' ? 'authenticator' : 'backup'} code as "code".`, {
        fields: ['code'],
      });
    return body.code;
  }
}

/**
 * Marks a refused code (401) as a wrong try of the attempt; the throttle's 429 and other refusals
 * are not, except a registration that does not verify (400) when `invalidRequestToo`.
 */
async function wrong<T>(work: Promise<T>, invalidRequestToo = false): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'invalid_credentials' || (invalidRequestToo && error.code === 'invalid_request')))
      throw new WrongCode(error);
    throw error;
  }
}
