import type { SignedIn } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import type { RequestContext } from '../http/request-context.js';
import type { IdentityService } from '../identity/service.js';
import { apiError } from '../lib/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import { factorsOf } from '../sessions/factors.js';
import type { SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import type { SignInDoor } from './door.js';
import * as q from './handoff-queries.js';

const INVALID =
  'This handoff token is invalid, expired or already used. Tokens are single-use and live 60 seconds: sign in again on the hosted page.';

export interface HandoffWayOptions {
  store: Store;
  door: Pick<SignInDoor, 'completeSignIn' | 'handOff'>;
  sessions: Pick<SessionService, 'signOut'>;
  identity: Pick<IdentityService, 'findUser'>;
  now: () => number;
}

/**
 * Carries a sign-in from a hosted page to the application: the page asks the door for a token for a
 * URL that passes the origin lock, the application exchanges it for a session of its own.
 */
export class HandoffWay {
  constructor(private readonly options: HandoffWayOptions) {}

  /** The redirect URL with `#__gh_handoff=<token>` (minted by the door). */
  create(environment: Environment, session: { userId: string; sessionId: string }, redirectUrl: string): Promise<{ redirectUrl: string }> {
    return this.options.door.handOff(environment, session, redirectUrl);
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
    const minting = row.session_id === null ? undefined : await q.sessionFactors(this.options.store.db, environment.id, row.session_id);
    if (!minting) throw apiError('invalid_credentials', INVALID);
    const carried = factorsOf(minting);
    const outcome = await this.options.door.completeSignIn(environment, { userId: user.id, firstFactor: 'handoff', carried }, context);
    // A handoff carries a session that passed the door already: it is never asked a second factor.
    if (!('session' in outcome)) throw new Error('The door asked a hosted handoff for a second factor.');
    const { session } = outcome;
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
}
