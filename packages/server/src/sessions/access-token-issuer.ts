import type { Store } from '../db/index.js';
import type { RequestContext } from '../http/request-context.js';
import type { Environment } from '../tenancy/settings.js';
import { CustomClaims } from './claims-template.js';
import { clearActiveOrganization } from './queries.js';
import { actorSessionEnd, factorClaims, type SessionFactors } from './factors.js';
import type { AccessTokens } from './tokens.js';

export interface ClaimsContext {
  environment: Environment;
  userId: string;
  sessionId: string;
  activeOrganizationId: string | null;
  /** Whether the session has verified a second factor (an organization may require one). */
  secondFactorVerified: boolean;
}

/**
 * Extra access-token claims for a session. The Organizations feature plugs in here to add
 * org_id, org_slug, org_role and org_permissions for the session's active organization; it answers
 * undefined when that organization is no longer the user's, and the session's is then cleared.
 */
export type ExtraClaimsProvider = (context: ClaimsContext) => Promise<Record<string, unknown> | undefined>;

export type { RequestContext };

export interface SessionRef {
  id: string;
  userId: string;
  activeOrganizationId: string | null;
  /** What the session verified: the token's `amr` and `fva`. */
  factors: SessionFactors;
}

/** Signs a session's access token: its custom claims, then org_* and the registered claims. */
export class AccessTokenIssuer {
  private readonly customClaims = new CustomClaims();

  constructor(
    private readonly store: Store,
    private readonly tokens: AccessTokens,
    private readonly now: () => number,
    private readonly extraClaims?: ExtraClaimsProvider | undefined,
  ) {}

  async issue(environment: Environment, session: SessionRef, context: RequestContext): Promise<{ token: string; expiresIn: number }> {
    const [custom, extra] = await Promise.all([
      this.customClaims.render(this.store.db, environment, session.userId),
      this.extraClaims
        ? this.extraClaims({
            environment,
            userId: session.userId,
            sessionId: session.id,
            activeOrganizationId: session.activeOrganizationId,
            secondFactorVerified: session.factors.second_factor_at !== null,
          })
        : undefined,
    ]);
    if (this.extraClaims && extra === undefined && session.activeOrganizationId !== null) {
      // A concurrent switch wins: only this organization is cleared.
      await clearActiveOrganization(this.store.db, environment.id, session.id, session.activeOrganizationId);
    }
    // Custom claims first: org_* and the registered claims (added by issue) always win.
    const extraClaims = custom ? { ...custom, ...extra } : extra;
    return this.tokens.issue(environment, {
      userId: session.userId,
      sessionId: session.id,
      origin: context.origin,
      ...factorClaims(session.factors, this.now()),
      ...(extraClaims ? { extraClaims } : {}),
      // An impersonated session's tokens never outlive its hour, even where they are verified offline.
      notAfter: actorSessionEnd(session.factors, this.now()),
    });
  }
}
