import type { SecondFactorNeeded, SignedIn, SignUpBody } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import type { RequestContext } from '../http/request-context.js';
import { normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import type { PasswordService } from '../identity/password-service.js';
import { wrongCode, type VerificationCodes } from '../lib/codes.js';
import { newId } from '../lib/crypto.js';
import { ApiError, apiError } from '../lib/errors.js';
import type { Mail } from '../mail/mail.js';
import { EMAIL_CODE_CLIENT } from '../ratelimit/throttle-policies.js';
import { clientSubject, type SignInThrottle } from '../ratelimit/throttle.js';
import type { Environment } from '../tenancy/settings.js';
import { signedInOr, type SignInDoor } from './door.js';
import { FLOW_TTL_MS, MAX_CODE_ATTEMPTS } from './emailed-secrets.js';
import * as q from './queries.js';

export interface SignUpVerificationOptions {
  store: Store;
  identity: Pick<IdentityService, 'createVerifiedUserIn' | 'assertProfile'>;
  passwords: Pick<PasswordService, 'checkPassword' | 'hashPassword'>;
  door: Pick<SignInDoor, 'completeSignIn'>;
  mail: Mail;
  now: () => number;
  /** Sign-up codes (the email codes' key: a code is bound to its attempt's id). */
  codes: VerificationCodes;
  throttle: SignInThrottle;
}

function codesLocked(seconds: number): string {
  return `Too many wrong or expired sign-up codes from this network; wait ${seconds} seconds before trying again.`;
}

const NO_LIVE_CODE = 'No valid code for this sign-up: it expired, was used, or had too many wrong tries. Sign up again to get a new code.';

/** A sign-up code is bound to its attempt, apart from the email codes sharing the key. */
const binding = (attemptId: string) => `signup:${attemptId}`;

/**
 * Password sign-up when the environment's emailVerification is "required": the start answers the
 * same and does the same work whether or not the address has an account (it never looks), and the
 * account is created only when the emailed code comes back.
 */
export class SignUpVerification {
  constructor(private readonly options: SignUpVerificationOptions) {}

  async start(environment: Environment, input: SignUpBody): Promise<{ status: 'verification_required'; signUpId: string }> {
    const email = normalizeEmail(input.email);
    this.options.passwords.checkPassword(input.password);
    await this.options.identity.assertProfile(environment, input);
    const passwordHash = await this.options.passwords.hashPassword(input.password);
    const now = this.options.now();
    const id = newId('su', environment.id);
    const { code, hash } = this.options.codes.create(binding(id));
    await inTransaction(this.options.store.db, async (tx) => {
      const throttled = await this.options.mail.throttled(tx, environment, email, now);
      await q.insertSignUpAttempt(tx, environment.id, {
        id,
        email,
        password_hash: passwordHash,
        first_name: input.firstName ?? null,
        last_name: input.lastName ?? null,
        username: input.username ?? null,
        code_hash: hash,
        created_at: now,
        expires_at: now + FLOW_TTL_MS,
        // A throttled start sends nothing, so its attempt is born used.
        consumed_at: throttled ? now : null,
      });
      await this.options.mail.send(tx, environment, 'sign_up_verification', email, { code, expiresInMinutes: FLOW_TTL_MS / 60_000 }, { now, throttled });
    });
    return { status: 'verification_required', signUpId: id };
  }

  async verify(
    environment: Environment,
    input: { signUpId: string; code: string },
    context: RequestContext,
    clientAddress: string,
  ): Promise<SignedIn | SecondFactorNeeded> {
    const subjects = [{ policy: EMAIL_CODE_CLIENT, subject: clientSubject(clientAddress) }];
    const db = this.options.store.db;
    const attempt = await this.options.throttle.guard(environment.id, subjects, codesLocked, async () => {
      const now = this.options.now();
      const row = await q.findLiveSignUpAttempt(db, environment.id, input.signUpId, now, MAX_CODE_ATTEMPTS);
      if (!row) throw apiError('invalid_credentials', NO_LIVE_CODE, { fields: ['code'] });
      const verdict = await this.options.codes.check({
        stored: row.code_hash,
        binding: binding(row.id),
        code: input.code,
        recordWrong: async () => {
          await q.recordWrongSignUpCode(db, environment.id, row.id);
          return MAX_CODE_ATTEMPTS - (row.attempts + 1);
        },
        consume: () => q.consumeSignUpAttempt(db, environment.id, row.id, now),
      });
      if ('triesLeft' in verdict) throw wrongCode(verdict.triesLeft, '. Sign up again to get a new code.', ['code']);
      if (!verdict.ok) throw apiError('invalid_credentials', NO_LIVE_CODE, { fields: ['code'] });
      return row;
    });
    let user;
    try {
      user = await this.options.identity.createVerifiedUserIn(
        db,
        environment,
        {
          email: attempt.email,
          firstName: attempt.first_name ?? undefined,
          lastName: attempt.last_name ?? undefined,
          username: attempt.username ?? undefined,
        },
        attempt.password_hash,
      );
    } catch (error) {
      const fields = error instanceof ApiError ? (error.details as { fields?: string[] } | undefined)?.fields : undefined;
      if (error instanceof ApiError && error.code === 'conflict' && fields?.includes('email')) {
        throw apiError('conflict', 'An account with this email address already exists. Sign in instead, or reset its password.', {
          fields: ['email'],
        });
      }
      throw error;
    }
    const outcome = await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'email' }, context);
    return signedInOr({ id: user.id, email: user.email }, outcome);
  }
}
