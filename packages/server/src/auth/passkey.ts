import type { PasskeyResponse, PasskeySignInOptions, SignedIn } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import { apiError } from '../lib/errors.js';
import type { PasskeyCeremonies } from '../passkeys/ceremonies.js';
import type { RequestContext } from '../sessions/access-token-issuer.js';
import type { Environment } from '../tenancy/settings.js';
import type { SignInDoor } from './door.js';
import type { SecondFactorStep } from './second-factor.js';

export interface PasskeyWayOptions {
  ceremonies: PasskeyCeremonies;
  door: SignInDoor;
  /** The second step of a sign-in: options for a second-factor attempt's user's passkeys, bound to it. */
  secondFactor?: Pick<SecondFactorStep, 'passkeyOptions'> | undefined;
  /** Where a failure to record a refused attempt as spent is told (it cannot change the answer). */
  log?: Pick<FastifyBaseLogger, 'warn'> | undefined;
}

/**
 * Sign-in with a passkey as the first factor (discoverable credentials): options bound to a new
 * attempt, then the assertion. User verification is required, so the passkey satisfies MFA by
 * itself: the door stamps both factors.
 */
export class PasskeyWay {
  constructor(private readonly deps: PasskeyWayOptions) {}

  private assertEnabled(environment: Environment): void {
    if (!environment.settings.authMethods.passkey) {
      throw apiError('method_disabled', 'Passkey sign-in is turned off for this environment (authMethods.passkey).');
    }
  }

  /**
   * Options for a discoverable sign-in (a new attempt), or, with the `attemptId` of a second-factor
   * attempt, for that attempt's user's own passkeys (a passkey as the second factor: needs mfa on,
   * not authMethods.passkey). The assertion then goes to the second-factor step, not to verify().
   */
  async start(environment: Environment, requestOrigin: string | undefined, attemptId?: string): Promise<PasskeySignInOptions> {
    if (attemptId === undefined) {
      this.assertEnabled(environment);
      return this.deps.ceremonies.signInOptions(environment, requestOrigin);
    }
    if (!this.deps.secondFactor) {
      throw apiError('invalid_credentials', 'This sign-in attempt is unknown, finished or expired. Start the sign-in again.');
    }
    return this.deps.secondFactor.passkeyOptions(environment, attemptId, requestOrigin);
  }

  async verify(
    environment: Environment,
    input: { attemptId: string; response: PasskeyResponse },
    context: RequestContext,
  ): Promise<SignedIn> {
    this.assertEnabled(environment);
    const { ceremonies, door } = this.deps;
    const verified = await ceremonies.verifySignIn(environment, input.attemptId, input.response);
    try {
      // A passkey with user verification is both factors: the door never asks it for another. The
      // session starts in the transaction that spends the challenge and moves the counter, and the
      // start reads the user (and refuses a deleted or banned one).
      const { session, user } = await door.completeSignIn(
        environment,
        { userId: verified.userId, firstFactor: 'passkey', proofWrites: verified.proofWrites },
        context,
      );
      return { user: { id: user.id, email: user.email }, session };
    } catch (error) {
      // Whatever refused it, the attempt is spent. A replay, a moved counter or a banned user
      // committed that already; this covers a failure before the commit, and its own failure must
      // not replace the answer.
      await ceremonies.spendSignIn(environment, verified.challenge).catch((spendError: unknown) => {
        this.deps.log?.warn({ err: spendError, environmentId: environment.id }, 'could not record a refused passkey sign-in as spent');
      });
      throw error;
    }
  }
}
