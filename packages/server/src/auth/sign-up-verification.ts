import type { SignedIn, SignUpBody } from '@gatehouse/contract';
import { createHmac, randomInt } from 'node:crypto';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { normalizeEmail } from '../identity/email.js';
import { assertAcceptablePassword } from '../identity/password-policy.js';
import { hashPassword } from '../identity/passwords.js';
import type { IdentityService } from '../identity/service.js';
import { constantTimeEqual, newId } from '../lib/crypto.js';
import { ApiError, apiError } from '../lib/errors.js';
import { EMAIL_CODE_CLIENT } from '../ratelimit/throttle-policies.js';
import { clientSubject, SignInThrottle } from '../ratelimit/throttle.js';
import type { RequestContext } from '../http/request-context.js';
import type { SignInDoor } from './door.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import { enqueueEmail, isThrottled } from '../flows/outbox.js';
import * as q from '../flows/queries.js';
import { FLOW_TTL_MS, MAX_CODE_ATTEMPTS } from './passwordless.js';
import { renderEmail } from '../flows/templates.js';

export interface SignUpVerificationOptions {
  store: Store;
  identity: Pick<IdentityService, 'createVerifiedUserIn' | 'assertProfile'>;
  door: Pick<SignInDoor, 'completeSignIn'>;
  tenancy: Pick<TenancyService, 'getProject'>;
  now: () => number;
  /** HMAC key for stored codes (the email codes' key: the code is bound to its attempt's id). */
  codeKey: Buffer;
  wake: () => void;
  throttle?: SignInThrottle | undefined;
}

function codesLocked(seconds: number): string {
  return `Too many wrong or expired sign-up codes from this network; wait ${seconds} seconds before trying again.`;
}

const NO_LIVE_CODE = 'No valid code for this sign-up: it expired, was used, or had too many wrong tries. Sign up again to get a new code.';

/**
 * Password sign-up when the environment's emailVerification is "required": the start answers the
 * same and does the same work whether or not the address has an account (it never looks), and the
 * account is created only when the emailed code comes back.
 */
export class SignUpVerification {
  private readonly throttle: SignInThrottle;

  constructor(private readonly options: SignUpVerificationOptions) {
    this.throttle = options.throttle ?? new SignInThrottle({ clock: Date.now });
  }

  private codeHash(attemptId: string, code: string): string {
    return createHmac('sha256', this.options.codeKey).update(`signup:${attemptId}:${code}`).digest('hex');
  }

  async start(environment: Environment, input: SignUpBody): Promise<{ status: 'verification_required'; signUpId: string }> {
    const email = normalizeEmail(input.email);
    assertAcceptablePassword(input.password);
    await this.options.identity.assertProfile(environment, input);
    const passwordHash = await hashPassword(input.password);
    const { project } = await this.options.tenancy.getProject(environment.projectId);
    const now = this.options.now();
    const id = newId('su', environment.id);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await inTransaction(this.options.store.db, async (tx) => {
      const throttled = await isThrottled(tx, environment.id, email, now);
      await q.insertSignUpAttempt(tx, environment.id, {
        id,
        email,
        password_hash: passwordHash,
        first_name: input.firstName ?? null,
        last_name: input.lastName ?? null,
        username: input.username ?? null,
        code_hash: this.codeHash(id, code),
        created_at: now,
        expires_at: now + FLOW_TTL_MS,
        // A throttled start sends nothing, so its attempt is born used.
        consumed_at: throttled ? now : null,
      });
      const rendered = renderEmail({
        kind: 'sign_up_verification',
        projectName: project.name,
        logoUrl: project.logo_url,
        code,
        expiresInMinutes: FLOW_TTL_MS / 60_000,
      });
      await enqueueEmail(tx, { environment, kind: 'sign_up_verification', to: email, rendered, deliver: true, throttled }, now);
    });
    this.options.wake();
    return { status: 'verification_required', signUpId: id };
  }

  async verify(
    environment: Environment,
    input: { signUpId: string; code: string },
    context: RequestContext,
    clientAddress: string,
  ): Promise<SignedIn> {
    const subjects = [{ policy: EMAIL_CODE_CLIENT, subject: clientSubject(clientAddress) }];
    const db = this.options.store.db;
    const attempt = await this.throttle.guard(environment.id, subjects, codesLocked, async () => {
      const now = this.options.now();
      const row = await q.findLiveSignUpAttempt(db, environment.id, input.signUpId, now, MAX_CODE_ATTEMPTS);
      if (!row) throw apiError('invalid_credentials', NO_LIVE_CODE, { fields: ['code'] });
      if (!constantTimeEqual(row.code_hash, this.codeHash(row.id, input.code))) {
        await q.recordWrongSignUpCode(db, environment.id, row.id);
        const left = MAX_CODE_ATTEMPTS - (row.attempts + 1);
        throw apiError(
          'invalid_credentials',
          left > 0
            ? `The code is incorrect; ${left} ${left === 1 ? 'try' : 'tries'} left.`
            : 'The code is incorrect and is now void. Sign up again to get a new code.',
          { fields: ['code'] },
        );
      }
      if (!(await q.consumeSignUpAttempt(db, environment.id, row.id, now)))
        throw apiError('invalid_credentials', NO_LIVE_CODE, { fields: ['code'] });
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
    const session = await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'email' }, context);
    return { user: { id: user.id, email: user.email }, session };
  }
}
