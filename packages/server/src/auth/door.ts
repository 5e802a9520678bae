import type { SessionTokens } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import type { RequestContext } from '../sessions/access-token-issuer.js';
import type { SessionFactors } from '../sessions/factors.js';
import type { SessionStarter, SignInUser } from '../sessions/start.js';
import type { Environment } from '../tenancy/settings.js';
import { insertHandoff } from './handoff-queries.js';
import { validateRedirectUrl } from '../tenancy/redirect.js';

export const HANDOFF_TTL_MS = 60_000;
export const HANDOFF_FRAGMENT = '__gh_handoff';

/**
 * The first factor a way in proved, named as the access token's `amr` names it: `pwd` (a password),
 * `email` (a magic link, an email code, a sign-up code or an invitation token), `sso` (an IdP or a
 * social provider), `actor` (an actor token: impersonation, docs/impersonation.md). A `handoff`
 * carries a sign-in that already passed this door on a hosted page.
 */
export type FirstFactor = 'pwd' | 'email' | 'sso' | 'actor' | 'handoff';

/**
 * Who signs in, and with what: a first factor proven in this request, or (a hosted handoff) the
 * factors the minting session verified, carried as they are: the new session is never fresher.
 */
export type SignInAttempt =
  | { userId: string; firstFactor: Exclude<FirstFactor, 'handoff' | 'actor'> }
  /** Impersonation: who acts (`act.sub`). Such a session skips the second factor and lives at most an hour. */
  | { userId: string; firstFactor: 'actor'; actor: { sub: string } }
  | { userId: string; firstFactor: 'handoff'; carried: SessionFactors };

/** Runs once a session exists, in every sign-in and sign-up (organization domain enrolment). */
export type SignedInHook = (environment: Environment, user: SignInUser) => Promise<void>;

export interface SignInDoorOptions {
  store: Store;
  /** The session-writing capability: the composition root hands it to this door alone. */
  starter: SessionStarter;
  now: () => number;
  signedIn?: SignedInHook | undefined;
}

/**
 * The one door to a session. Every way in (auth/*.ts) proves a first factor, then calls
 * `completeSignIn`; nothing else can start a session, mint its first refresh token or a hosted
 * handoff token (the test in test/unit/one-door.test.ts holds the source to that). This is where a
 * second factor will be decided: one place, so no way in can forget it.
 */
export class SignInDoor {
  constructor(private readonly options: SignInDoorOptions) {}

  async completeSignIn(environment: Environment, attempt: SignInAttempt, context: RequestContext): Promise<SessionTokens> {
    const proof =
      attempt.firstFactor === 'handoff'
        ? { carried: attempt.carried }
        : attempt.firstFactor === 'actor'
          ? { verified: ['actor' as const], actor: attempt.actor.sub }
          : { verified: [attempt.firstFactor] };
    const { tokens, user } = await this.options.starter.start(environment, attempt.userId, proof, context);
    if (this.options.signedIn) await this.options.signedIn(environment, user);
    return tokens;
  }

  /**
   * A hosted page hands its signed-in user to the application: the redirect URL (origin lock) with
   * `#__gh_handoff=<token>`; only the token's hash is stored.
   */
  async handOff(environment: Environment, session: { userId: string; sessionId: string }, redirectUrl: string): Promise<{ redirectUrl: string }> {
    const url = validateRedirectUrl(environment, redirectUrl);
    const token = newSecret('', 32);
    const now = this.options.now();
    await insertHandoff(this.options.store.db, environment.id, {
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
}
