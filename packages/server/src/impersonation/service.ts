import { ACTOR_TOKEN_DEFAULT_SECONDS, type ActorToken, type CreateActorTokenBody } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import type { IdentityService } from '../identity/service.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { apiError, notFound } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';

/** Who minted a token, as the audit log names it: a secret key, the platform key, or an operator (who then is the actor). */
export type Minter = { kind: 'secret_key'; id: string } | { kind: 'platform_key' } | { kind: 'operator'; id: string };

/** One audit-log line (operators/service.ts `record`), given by the composition root. */
export type ImpersonationAudit = (entry: {
  actor: { kind: 'secret_key' | 'platform_key' | 'operator' | 'actor'; id: string | null };
  action: string;
  target: string;
  status: number;
}) => Promise<void>;

export interface ImpersonationServiceOptions {
  store: Store;
  identity: Pick<IdentityService, 'findUser'>;
  /** Whether an environment is the operators' reserved one (operators/service.ts). */
  isOperatorsEnvironment: (environmentId: string) => Promise<boolean>;
  audit: ImpersonationAudit;
  baseUrl: string;
  now: () => number;
}

/** The user an audit line is about, as the platform API names it. */
export function userTarget(environmentId: string, userId: string): string {
  return `/v1/platform/environments/${environmentId}/users/${userId}`;
}

/** Mints actor tokens (docs/impersonation.md): only their hash is kept; the redemption is auth/actor.ts. */
export class ImpersonationService {
  constructor(private readonly options: ImpersonationServiceOptions) {}

  async create(environment: Environment, body: CreateActorTokenBody, minter: Minter): Promise<ActorToken> {
    // Operators are users of the reserved environment: no token can make anyone act as one.
    if (await this.options.isOperatorsEnvironment(environment.id)) {
      throw apiError('forbidden', 'Operators cannot be impersonated. Actor tokens act as users of your own environments only.');
    }
    const user = await this.options.identity.findUser(this.options.store.db, environment, body.userId);
    if (!user) throw notFound(`User ${body.userId}`);
    if (user.banned === 1) throw apiError('forbidden', 'This user is banned, so no session can start for them. Unban them first.');
    // An operator acts as themself, whatever the body names: the audit log and `act` must not lie.
    const sub = minter.kind === 'operator' ? minter.id : body.actor.sub;
    const now = this.options.now();
    const expiresAt = now + (body.expiresInSeconds ?? ACTOR_TOKEN_DEFAULT_SECONDS) * 1000;
    const id = newId('act');
    const token = newSecret('gh_act_', 32);
    await q.sweepActorTokens(this.options.store.db, environment.id, now);
    await q.insertActorToken(this.options.store.db, {
      environment_id: environment.id,
      id,
      user_id: user.id,
      actor_sub: sub,
      token_hash: sha256Hex(token),
      created_at: now,
      expires_at: expiresAt,
      consumed_at: null,
    });
    await this.options.audit({
      actor: { kind: minter.kind, id: 'id' in minter ? minter.id : null },
      action: `actor_token.created ${id} as ${sub}`,
      target: userTarget(environment.id, user.id),
      status: 201,
    });
    const url = new URL(`/hosted/${encodeURIComponent(environment.id)}/actor`, this.options.baseUrl);
    url.searchParams.set('token', token);
    return { id, token, url: url.href, expiresAt };
  }
}
