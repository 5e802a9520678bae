import type { SessionTokens } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { ApiError, userBanned } from '../lib/errors.js';
import { newId, sha256Hex } from '../lib/crypto.js';
import type { Environment } from '../tenancy/settings.js';
import type { UsageService } from '../usage/service.js';
import type { AccessTokenIssuer, RequestContext } from './access-token-issuer.js';
import type { RefreshTokens } from './refresh-token.js';
import { actorSessionEnd, verifiedNow, type Amr, type SessionFactors } from './factors.js';
import type { ProofWrites } from './proof-writes.js';
import { startSession, type SignInUser } from './start-queries.js';

export type { SignInUser };

/** What the new session has verified: factors proven in this request, or those carried from another session. */
export type SessionProof = { verified: readonly Amr[]; actor?: string | undefined } | { carried: SessionFactors };

export interface SessionStarterOptions {
  store: Store;
  issuer: AccessTokenIssuer;
  refreshTokens: RefreshTokens;
  usage: UsageService;
  now: () => number;
}

/**
 * The one way to write a new session and its first refresh token. The composition root hands it to
 * the sign-in door (auth/door.ts) alone, which decides whether a session may start at all.
 */
export class SessionStarter {
  constructor(private readonly options: SessionStarterOptions) {}

  /** Starts a session for a user who just proved who they are, and counts them as active. */
  async start(
    environment: Environment,
    userId: string,
    proof: SessionProof,
    context: RequestContext,
    proofWrites?: ProofWrites,
  ): Promise<{ tokens: SessionTokens; user: SignInUser }> {
    const now = this.options.now();
    // A sign-in verifies, at that moment, the factors it used (docs/mfa.md); a handoff carries its
    // minting session's verifications unchanged, so it can never make a session fresher than that one.
    const factors =
      'verified' in proof
        ? { ...verifiedNow(proof.verified, now), actor: proof.actor ?? null }
        : { ...proof.carried, actor: proof.carried.actor ?? null };
    let expiresAt = now + environment.settings.sessionLifetimeSeconds * 1000;
    // An impersonated session ends an hour after its token was redeemed, however it is carried on.
    const actorEnd = actorSessionEnd(factors, now);
    if (actorEnd !== undefined) expiresAt = Math.min(expiresAt, actorEnd);
    const id = newId('sess', environment.id);
    const refreshToken = this.options.refreshTokens.first(environment.id, id);
    const user = await startSession(
      this.options.store.db,
      environment.id,
      {
        id,
        user_id: userId,
        refresh_hash: sha256Hex(refreshToken),
        previous_hash: null,
        generation: 0,
        rotated_at: null,
        created_at: now,
        last_active_at: now,
        expires_at: expiresAt,
        revoked_at: null,
        active_organization_id: null,
        user_agent: context.userAgent?.slice(0, 300) ?? null,
        ...factors,
      },
      proofWrites?.writes,
    );
    if (user === 'refused') throw proofWrites!.refusal();
    if (user === 'banned') throw userBanned();
    if (!user)
      throw new ApiError('unauthenticated', 'This account was deleted while signing in. Sign up again, or sign in to another account.');
    const { token, expiresIn } = await this.options.issuer.issue(environment, { id, userId, activeOrganizationId: null, factors }, context);
    await this.options.usage.recordActivity(environment.id, userId);
    return { tokens: { accessToken: token, refreshToken, expiresIn, tokenType: 'Bearer' }, user };
  }
}
