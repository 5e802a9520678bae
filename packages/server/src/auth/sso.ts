import type { SecondFactorNeeded, SignedIn } from '@gatehouse/contract';
import type { RequestContext } from '../http/request-context.js';
import type { SsoFlowService } from '../sso/flow.js';
import type { Environment } from '../tenancy/settings.js';
import { signedInOr, type SignInDoor } from './door.js';

/** SSO completion: the one-time token an IdP's answer left at redirectUrl, exchanged for a session. */
export class SsoWay {
  constructor(private readonly options: { flows: Pick<SsoFlowService, 'redeem'>; door: Pick<SignInDoor, 'completeSignIn'> }) {}

  async verify(environment: Environment, token: string, context: RequestContext): Promise<SignedIn | SecondFactorNeeded> {
    const user = await this.options.flows.redeem(environment, token);
    return signedInOr(user, await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'sso' }, context));
  }
}
