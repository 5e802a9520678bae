import type { SecondFactorNeeded, SignedIn, SignUpBody } from '@gatehouse/contract';
import type { RequestContext } from '../http/request-context.js';
import type { IdentityService } from '../identity/service.js';
import type { PasswordService } from '../identity/password-service.js';
import { apiError } from '../lib/errors.js';
import { PASSWORD_ACCOUNT, PASSWORD_CLIENT } from '../ratelimit/throttle-policies.js';
import { clientSubject, type SignInThrottle } from '../ratelimit/throttle.js';
import { emailKeyOf } from '../identity/email.js';
import type { Environment } from '../tenancy/settings.js';
import { signedInOr, type SignInDoor } from './door.js';

// One message whichever counter is locked and whether or not the account exists.
function passwordLocked(seconds: number): string {
  return (
    `Too many failed password sign-ins for this account or from this network; wait ${seconds} seconds before trying again. ` +
    'A magic link, an email code or a password reset works meanwhile.'
  );
}

export interface PasswordWayOptions {
  identity: Pick<IdentityService, 'assertSignUpOpen' | 'createUser'>;
  passwords: Pick<PasswordService, 'authenticate'>;
  throttle: SignInThrottle;
  door: SignInDoor;
}

/** The password way in: sign-up without a code (emailVerification off), and sign-in. */
export class PasswordWay {
  constructor(private readonly options: PasswordWayOptions) {}

  /** POST /v1/auth/signup: creates a user with a password and signs them in. */
  async signUp(environment: Environment, input: SignUpBody, context: RequestContext): Promise<SignedIn | SecondFactorNeeded> {
    this.options.identity.assertSignUpOpen(environment);
    const user = await this.options.identity.createUser(environment, input);
    const outcome = await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'pwd' }, context);
    return signedInOr({ id: user.id, email: user.email }, outcome);
  }

  /**
   * POST /v1/auth/signin. Each attempt counts against the address (known or not) and the client
   * address; while either is locked the attempt is refused with 429 before any password is looked at.
   */
  async signIn(
    environment: Environment,
    input: { email: string; password: string },
    context: RequestContext,
    clientAddress: string,
  ): Promise<SignedIn | SecondFactorNeeded> {
    if (!environment.settings.authMethods.password) {
      throw apiError(
        'method_disabled',
        'Password sign-in is disabled for this environment. Enable it in the environment settings, or use another method.',
      );
    }
    const subjects = [
      { policy: PASSWORD_ACCOUNT, subject: emailKeyOf(input.email) },
      { policy: PASSWORD_CLIENT, subject: clientSubject(clientAddress) },
    ];
    return this.options.throttle.guard(environment.id, subjects, passwordLocked, async () => {
      const { row, proof } = await this.options.passwords.authenticate(environment, input);
      const outcome = await this.options.door.completeSignIn(
        environment,
        { userId: row.id, firstFactor: 'pwd', proofWrites: proof },
        context,
      );
      return signedInOr({ id: row.id, email: row.email }, outcome);
    });
  }
}
