import type { InvitationAccepted, InvitationPreview, SecondFactorNeeded } from '@gatehouse/contract';
import type { RequestContext } from '../http/request-context.js';
import type { InvitationService } from '../invitations/service.js';
import type { Environment } from '../tenancy/settings.js';
import type { SignInDoor } from './door.js';

/** Invitation acceptance by the emailed token: the token proves the address, as a magic link does. */
export class InvitationWay {
  constructor(
    private readonly options: {
      invitations: Pick<InvitationService, 'acceptWithToken' | 'previewWithToken'>;
      door: Pick<SignInDoor, 'completeSignIn'>;
    },
  ) {}

  preview(environment: Environment, token: string): Promise<InvitationPreview> {
    return this.options.invitations.previewWithToken(environment, token);
  }

  async accept(
    environment: Environment,
    input: { token: string; password?: string | undefined; firstName?: string | undefined; lastName?: string | undefined },
    context: RequestContext,
  ): Promise<InvitationAccepted | SecondFactorNeeded> {
    const { user, organizationId } = await this.options.invitations.acceptWithToken(environment, input);
    // The invitation is accepted (the membership exists) either way; the session may wait for a second factor.
    const outcome = await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'email' }, context);
    return 'session' in outcome ? { user, session: outcome.session, organizationId } : outcome;
  }
}
