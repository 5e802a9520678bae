import type { PasskeyResponse, PasskeySignInOptions, SignedIn } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import type { IdentityService } from '../identity/service.js';
import { apiError } from '../lib/errors.js';
import type { PasskeyCeremonies } from '../passkeys/ceremonies.js';
import type { RequestContext } from '../sessions/access-token-issuer.js';
import type { Environment } from '../tenancy/settings.js';
import type { SignInDoor } from './door.js';

export interface PasskeyWayOptions {
  store: Store;
  ceremonies: PasskeyCeremonies;
  identity: Pick<IdentityService, 'findUser'>;
  door: SignInDoor;
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

  async start(environment: Environment, requestOrigin: string | undefined): Promise<PasskeySignInOptions> {
    this.assertEnabled(environment);
    return this.deps.ceremonies.authenticationOptions(environment, {}, requestOrigin);
  }

  async verify(environment: Environment, input: { attemptId: string; response: PasskeyResponse }, context: RequestContext): Promise<SignedIn> {
    this.assertEnabled(environment);
    const { userId } = await this.deps.ceremonies.verifyAuthentication(environment, input.attemptId, input.response);
    const user = await this.deps.identity.findUser(this.deps.store.db, environment, userId);
    if (!user) throw apiError('invalid_credentials', 'This passkey could not be verified. Try again, or sign in another way.');
    const session = await this.deps.door.completeSignIn(environment, { userId, firstFactor: 'passkey' }, context);
    return { user: { id: user.id, email: user.email }, session };
  }
}
