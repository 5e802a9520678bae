import type { SignedIn } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import type { RequestContext } from '../http/request-context.js';
import type { IdentityService } from '../identity/service.js';
import { consumeActorToken } from '../impersonation/queries.js';
import { userTarget, type ImpersonationAudit } from '../impersonation/service.js';
import { apiError } from '../lib/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Environment } from '../tenancy/settings.js';
import type { SignInDoor } from './door.js';

const INVALID =
  'This actor token is invalid, expired or already used. Actor tokens are single-use and short-lived: create a new one (POST /v1/actor-tokens).';

export interface ActorWayOptions {
  store: Store;
  door: Pick<SignInDoor, 'completeSignIn'>;
  identity: Pick<IdentityService, 'findUser'>;
  audit: ImpersonationAudit;
  now: () => number;
}

/**
 * The way in by actor token (impersonation, docs/impersonation.md): the token is spent first
 * (compare-and-set, so a second or concurrent use fails), then the door starts a session whose
 * tokens say who acts (`act.sub`) and whose `amr` is `["actor"]`.
 */
export class ActorWay {
  constructor(private readonly options: ActorWayOptions) {}

  async redeem(environment: Environment, token: string, context: RequestContext): Promise<SignedIn> {
    const row = await consumeActorToken(this.options.store.db, environment.id, sha256Hex(token), this.options.now());
    if (!row) throw apiError('invalid_credentials', INVALID);
    const user = await this.options.identity.findUser(this.options.store.db, environment, row.user_id);
    if (!user) throw apiError('invalid_credentials', INVALID);
    const { session } = await this.options.door.completeSignIn(
      environment,
      { userId: user.id, firstFactor: 'actor', actor: { sub: row.actor_sub } },
      context,
    );
    await this.options.audit({
      actor: { kind: 'actor', id: row.actor_sub },
      action: `actor_token.redeemed ${row.id}`,
      target: userTarget(environment.id, user.id),
      status: 200,
    });
    return { user: { id: user.id, email: user.email }, session };
  }
}
