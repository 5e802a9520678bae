import type { SignedIn } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { validateRedirectUrl } from '../flows/redirect.js';
import type { IdentityService } from '../identity/service.js';
import { apiError } from '../lib/errors.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import type { RequestContext, SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';

export const HANDOFF_TTL_MS = 60_000;
export const HANDOFF_FRAGMENT = '__gh_handoff';

const INVALID =
  'This handoff token is invalid, expired or already used. Tokens are single-use and live 60 seconds: sign in again on the hosted page.';

export interface HandoffServiceOptions {
  store: Store;
  sessions: SessionService;
  identity: IdentityService;
  now: () => number;
}

/**
 * Carries a sign-in from a hosted page to the application: the page asks for a token for a URL that
 * passes the origin lock, the application exchanges it for a session of its own.
 */
export class HandoffService {
  constructor(private readonly options: HandoffServiceOptions) {}

  /** The redirect URL with `#__gh_handoff=<token>`; only the token's hash is stored. */
  async create(environment: Environment, session: { userId: string; sessionId: string }, redirectUrl: string): Promise<{ redirectUrl: string }> {
    const url = validateRedirectUrl(environment, redirectUrl);
    const token = newSecret('', 32);
    const now = this.options.now();
    await q.insertHandoff(this.options.store.db, environment.id, {
      id: newId('hnd'),
      userId: session.userId,
      // Bound to the minting session: revoking it (sign-out, revoke-all, password change, the
      // pre-registration defence) voids the token too.
      sessionId: session.sessionId,
      tokenHash: sha256Hex(token),
      createdAt: now,
      expiresAt: now + HANDOFF_TTL_MS,
    });
    url.hash = `${HANDOFF_FRAGMENT}=${token}`;
    return { redirectUrl: url.href };
  }

  /**
   * Single use, within 60 s, in the environment that issued it, while the session that minted it is
   * live: a new session for the application.
   */
  async exchange(environment: Environment, token: string, context: RequestContext): Promise<SignedIn> {
    const now = this.options.now();
    const activeSince = now - environment.settings.sessionInactivitySeconds * 1000;
    const row = await q.consumeHandoff(this.options.store.db, environment.id, sha256Hex(token), { now, activeSince });
    if (!row) throw apiError('invalid_credentials', INVALID);
    const user = await this.options.identity.findUser(this.options.store.db, environment, row.user_id);
    if (!user) throw apiError('invalid_credentials', INVALID);
    const session = await this.options.sessions.create(environment, user.id, context);
    // A revoke-all that committed between the consume and the start did not see the new session:
    // once the minting session is found dead, the new one goes too (announced, like any sign-out).
    const later = this.options.now();
    const live = { now: later, activeSince: later - environment.settings.sessionInactivitySeconds * 1000 };
    if (row.session_id === null || !(await q.sessionIsLive(this.options.store.db, environment.id, row.session_id, live))) {
      await this.options.sessions.signOut(environment, session.refreshToken);
      throw apiError('invalid_credentials', INVALID);
    }
    return { user: { id: user.id, email: user.email }, session };
  }

  /** The refusal a hosted page shows for a redirect_url outside the origin lock, or null. */
  redirectProblem(environment: Environment, redirectUrl: string | undefined): string | null {
    if (redirectUrl === undefined) return null;
    try {
      validateRedirectUrl(environment, redirectUrl);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message.replace(/^redirectUrl/, 'The redirect_url') : 'The redirect_url is not allowed.';
    }
  }
}
