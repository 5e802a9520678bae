import type { SecondFactorNeeded, SignedIn } from '@gatehouse/contract';
import type { Selectable } from 'kysely';
import type { Store } from '../db/index.js';
import type { FlowTokensTable } from '../db/schema.js';
import type { RequestContext } from '../http/request-context.js';
import { emailKey, normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import { wrongCode, type VerificationCodes } from '../lib/codes.js';
import { sha256Hex } from '../lib/crypto.js';
import { apiError, userBanned } from '../lib/errors.js';
import { EMAIL_CODE_ACCOUNT, EMAIL_CODE_CLIENT, overAllowance } from '../ratelimit/throttle-policies.js';
import { clientSubject, type SignInThrottle } from '../ratelimit/throttle.js';
import type { Environment } from '../tenancy/settings.js';
import { signedInOr, type SignInDoor } from './door.js';
import { INVALID_LINK, MAX_CODE_ATTEMPTS, requireMethod, requireSignUp, type EmailedSecrets } from './emailed-secrets.js';
import * as q from './queries.js';

type FlowToken = Selectable<FlowTokensTable>;

export type { SignedIn };

export interface PasswordlessWayOptions {
  store: Store;
  identity: Pick<IdentityService, 'findUser' | 'markEmailVerified' | 'createOrFindVerified'>;
  secrets: EmailedSecrets;
  /** Email codes, bound to their flow token's id. */
  codes: VerificationCodes;
  door: Pick<SignInDoor, 'completeSignIn'>;
  now: () => number;
  /** Sign-in throttling, shared with password sign-in. */
  throttle: SignInThrottle;
}

function codesLocked(seconds: number): string {
  return `Too many wrong or expired email codes from this network; wait ${seconds} seconds before trying again, or sign in with a magic link.`;
}

/** The passwordless ways in: a magic link, or a six-digit email code. Either signs in, or signs up a new address. */
export class PasswordlessWay {
  constructor(private readonly options: PasswordlessWayOptions) {}

  private get db() {
    return this.options.store.db;
  }

  async startMagicLink(environment: Environment, input: { email: string; redirectUrl: string }): Promise<void> {
    requireMethod(environment, 'magicLink');
    await this.options.secrets.startLinkFlow(environment, input, 'magic_link', { known: 'magic_link', unknown: 'sign_up_link' });
  }

  async verifyMagicLink(environment: Environment, token: string, context: RequestContext): Promise<SignedIn | SecondFactorNeeded> {
    requireMethod(environment, 'magicLink');
    const row = await q.consumeBySecret(this.db, environment.id, 'magic_link', sha256Hex(token), this.options.now());
    if (!row) throw apiError('invalid_credentials', INVALID_LINK);
    return this.signInOrSignUp(environment, row, context);
  }

  async startEmailCode(environment: Environment, input: { email: string }): Promise<void> {
    requireMethod(environment, 'emailCode');
    const email = normalizeEmail(input.email);
    await this.options.secrets.issue(environment, {
      purpose: 'email_code',
      email,
      secret: (id) => {
        const { code, hash } = this.options.codes.create(id);
        return { hash, content: { code } };
      },
      kinds: { known: 'email_code', unknown: 'sign_up_code' },
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
  ): Promise<SignedIn | SecondFactorNeeded> {
    requireMethod(environment, 'emailCode');
    const email = normalizeEmail(input.email);
    const subjects = [
      { policy: EMAIL_CODE_CLIENT, subject: clientSubject(clientAddress) },
      { policy: EMAIL_CODE_ACCOUNT, subject: emailKey(email) },
    ];
    return this.options.throttle.guard(environment.id, subjects, codesLocked, async (ticket) => {
      const now = this.options.now();
      const row = await q.findLiveCode(this.db, environment.id, emailKey(email), now);
      if (!row)
        throw apiError(
          'invalid_credentials',
          'No valid code for this address: it expired, was used, or was replaced by a newer one. Request a new code.',
        );
      const maxAttempts = overAllowance(EMAIL_CODE_ACCOUNT, ticket.count(EMAIL_CODE_ACCOUNT)) ? row.attempts + 1 : MAX_CODE_ATTEMPTS;
      const verdict = await this.options.codes.check({
        stored: row.secret_hash,
        binding: row.id,
        code: input.code,
        recordWrong: async () => maxAttempts - ((await q.recordWrongCode(this.db, environment.id, row.id, maxAttempts, now)) ?? maxAttempts),
        consume: () => q.consumeCode(this.db, environment.id, row.id, MAX_CODE_ATTEMPTS, now),
      });
      if ('triesLeft' in verdict) throw wrongCode(verdict.triesLeft, ' after too many tries. Request a new code.');
      if (!verdict.ok) throw apiError('invalid_credentials', 'This code is no longer valid. Request a new code.');
      return this.signInOrSignUp(environment, row, context);
    });
  }

  private async signInOrSignUp(environment: Environment, row: FlowToken, context: RequestContext): Promise<SignedIn | SecondFactorNeeded> {
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
      requireSignUp(environment);
      const { id, email } = await this.options.identity.createOrFindVerified(environment, row.email);
      user = { id, email };
    }
    return signedInOr(user, await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'email' }, context));
  }
}
