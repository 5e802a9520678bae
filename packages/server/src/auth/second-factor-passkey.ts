import type { PasskeyResponse } from '@gatehouse/contract';
import type { Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { IdentityService } from '../identity/service.js';
import { notFound } from '../lib/errors.js';
import type { NewCredential, PasskeyCeremonies } from '../passkeys/ceremonies.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';

/** What a passkey set up inside an attempt is called until its owner renames it. */
export const SET_UP_AT_SIGN_IN = 'Passkey';

export interface PasskeySecondFactorOptions {
  store: Store;
  ceremonies: Pick<
    PasskeyCeremonies,
    'authenticationOptions' | 'verifyAuthentication' | 'registrationOptions' | 'verifyRegistration' | 'store'
  >;
  /** mfa's bookkeeping after a passkey is added, in its transaction (twoFactorEnabled, user.updated). */
  writer: { passkeysChangedIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> };
  identity: Pick<IdentityService, 'findUser' | 'lockUser'>;
  tenancy: Pick<TenancyService, 'getProject'>;
}

/**
 * The challenge key of a second-factor attempt: the attempt's stored hash, never its id (the id is
 * the bearer of the first factor, and the database keeps only its hash). The prefix keeps it apart
 * from a discoverable sign-in's `pka_…`, which /v1/auth/passkey/verify takes from the body.
 */
function challengeKey(attemptHash: string): string {
  return `sia:${attemptHash}`;
}

/**
 * A passkey inside the second step of a sign-in (auth/second-factor.ts): the user's own passkeys
 * as the second factor, or a new one registered inside a `needs_second_factor_setup` attempt. The
 * ceremonies are passkeys/'s, bound to the attempt and its user; the step decides the rest.
 */
export class PasskeySecondFactor {
  constructor(private readonly options: PasskeySecondFactorOptions) {}

  /** Request options for the user's passkeys, bound to the attempt (a new call voids the previous challenge). */
  async assertionOptions(environment: Environment, attempt: { hash: string; userId: string }, origin: string | undefined) {
    const { options } = await this.options.ceremonies.authenticationOptions(
      environment,
      { attemptId: challengeKey(attempt.hash), userId: attempt.userId },
      origin,
    );
    return options;
  }

  /** The assertion, against the attempt's challenge (spent either way) and the attempt's user: else 401. Records the use. */
  async verifyAssertion(environment: Environment, attempt: { hash: string; userId: string }, response: PasskeyResponse): Promise<void> {
    await this.options.ceremonies.verifyAuthentication(environment, challengeKey(attempt.hash), response, attempt.userId);
  }

  /** Creation options as /v1/me/passkeys/registration makes them, bound to the attempt. */
  async registrationOptions(environment: Environment, attempt: { hash: string; userId: string }, origin: string | undefined) {
    const user = await this.options.identity.findUser(this.options.store.db, environment, attempt.userId);
    if (!user) throw notFound(`User ${attempt.userId}`);
    const { project } = await this.options.tenancy.getProject(environment.projectId);
    const displayName = [user.first_name, user.last_name].filter(Boolean).join(' ');
    return this.options.ceremonies.registrationOptions(
      environment,
      { id: user.id, email: user.email, displayName },
      challengeKey(attempt.hash),
      origin,
      project.name,
    );
  }

  /** The registration response, against the attempt's challenge (spent either way): 400 when it does not verify. */
  verifyRegistration(
    environment: Environment,
    attempt: { hash: string; userId: string },
    response: PasskeyResponse,
  ): Promise<NewCredential> {
    return this.options.ceremonies.verifyRegistration(environment, attempt.userId, challengeKey(attempt.hash), response);
  }

  /** Stores the verified passkey in the step's transaction, the one that spends the attempt. */
  async storeIn(tx: Transaction<Database>, environment: Environment, userId: string, credential: NewCredential): Promise<void> {
    const user = await this.options.identity.lockUser(tx, environment, userId);
    if (!user) throw notFound(`User ${userId}`);
    await this.options.ceremonies.store(tx, environment, user, credential, SET_UP_AT_SIGN_IN);
    await this.options.writer.passkeysChangedIn(tx, environment, userId);
  }
}
