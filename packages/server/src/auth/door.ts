import type { SecondFactorNeeded, SessionTokens } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import type { RequestContext } from '../sessions/access-token-issuer.js';
import type { Amr, SessionFactors } from '../sessions/factors.js';
import { proofHolds, type ProofWrites } from '../sessions/proof-writes.js';
import type { SessionStarter, SignInUser } from '../sessions/start.js';
import type { Environment } from '../tenancy/settings.js';
import { insertSignInAttempt, sweepSignInAttempts } from './attempt-queries.js';
import { inTransaction } from '../db/changes.js';
import { lockSessionsOwner } from '../sessions/queries.js';
import { insertHandoff } from './handoff-queries.js';
import { validateRedirectUrl } from '../tenancy/redirect.js';

export const HANDOFF_TTL_MS = 60_000;
export const HANDOFF_FRAGMENT = '__gh_handoff';
/** How long a second-factor attempt waits for its second step. */
export const ATTEMPT_TTL_MS = 10 * 60_000;

/**
 * The first factor a way in proved, named as the access token's `amr` names it: `pwd` (a password),
 * `email` (a magic link, an email code, a sign-up code or an invitation token), `sso` (an IdP or a
 * social provider), `passkey` (a passkey with user verification: both factors at once), `actor` (an
 * actor token: impersonation, docs/impersonation.md). A `handoff` carries a sign-in that already
 * passed this door on a hosted page.
 */
export type FirstFactor = 'pwd' | 'email' | 'sso' | 'passkey' | 'actor' | 'handoff';

/**
 * First factors that satisfy MFA by themselves, so the door starts a session without asking for a
 * second one: a handoff (it carries a session that passed this door), a passkey with user
 * verification, an actor token (impersonation).
 */
export const SELF_SUFFICIENT_FACTORS = ['handoff', 'passkey', 'actor'] as const;
export type SelfSufficientFactor = (typeof SELF_SUFFICIENT_FACTORS)[number];
export const SKIPS_SECOND_FACTOR: ReadonlySet<string> = new Set(SELF_SUFFICIENT_FACTORS);

/**
 * Who signs in, and with what: a first factor proven in this request, or (a hosted handoff) the
 * factors the minting session verified, carried as they are: the new session is never fresher.
 */
export type SignInAttempt =
  | { userId: string; firstFactor: Exclude<FirstFactor, 'handoff' | 'actor' | 'passkey' | 'pwd'> }
  /**
   * A password: its proof (the verified hash still the account's) runs where the session starts or,
   * when a second factor is asked, where the attempt is stored, so a reset or change committed
   * meanwhile refuses it (a setup attempt would otherwise let the old password enrol a factor of its own).
   */
  | { userId: string; firstFactor: 'pwd'; proofWrites?: ProofWrites | undefined }
  /** A passkey: what spends its proof (the challenge, the counter) commits with the session. */
  | { userId: string; firstFactor: 'passkey'; proofWrites: ProofWrites }
  /** Impersonation: who acts (`act.sub`). Such a session skips the second factor and lives at most an hour. */
  | { userId: string; firstFactor: 'actor'; actor: { sub: string } }
  | { userId: string; firstFactor: 'handoff'; carried: SessionFactors };

/** A session started, and its user as the start read them (so a way need not read them again). */
export type SessionStarted = { session: SessionTokens; user: SignInUser };

/** What the door answers: a session, or the second factor to ask for first (202). */
export type DoorOutcome = SessionStarted | SecondFactorNeeded;

/** A way's answer: the user and their session, or the 202 of the second step. */
export function signedInOr<U>(user: U, outcome: DoorOutcome): { user: U; session: SessionTokens } | SecondFactorNeeded {
  return 'session' in outcome ? { user, session: outcome.session } : outcome;
}

/** What the door asks for instead of a session. */
export type SecondFactorAsk = Pick<SecondFactorNeeded, 'status' | 'factors'>;

/**
 * The door's rule, whole: nothing under mfa "off", nor after a first factor that satisfies MFA by
 * itself; the user's second factors when they have any; under "required", the setup of one; else
 * nothing (a session). The user's factors are read only when they matter.
 */
export async function secondFactorRule(
  mode: Environment['settings']['mfa'],
  firstFactors: readonly string[],
  userFactors: () => Promise<SecondFactorNeeded['factors']>,
): Promise<SecondFactorAsk | undefined> {
  if (mode === 'off' || firstFactors.some((f) => SKIPS_SECOND_FACTOR.has(f))) return undefined;
  const factors = await userFactors();
  if (factors.length > 0) return { status: 'needs_second_factor', factors };
  if (mode === 'required') return { status: 'needs_second_factor_setup', factors: ['totp', 'passkey'] };
  return undefined;
}

/** Runs once a session exists, in every sign-in and sign-up (organization domain enrolment). */
export type SignedInHook = (environment: Environment, user: SignInUser) => Promise<void>;

export interface SignInDoorOptions {
  store: Store;
  /** The session-writing capability: the composition root hands it to this door alone. */
  starter: SessionStarter;
  /** The user's second factors, in the order `factors` lists them (mfa/service.ts). */
  secondFactorsOf: (environment: Environment, userId: string) => Promise<SecondFactorNeeded['factors']>;
  now: () => number;
  signedIn?: SignedInHook | undefined;
}

/**
 * The one door to a session. Every way in (auth/*.ts) proves a first factor, then calls
 * `completeSignIn`; nothing else can start a session, mint its first refresh token or a hosted
 * handoff token (test/unit/one-door.test.ts holds the source to that). Here, and only here, the
 * second factor is decided: a session now, or an attempt (`sia_…`) that auth/second-factor.ts
 * completes through `completeSecondFactor`.
 */
export class SignInDoor {
  constructor(private readonly options: SignInDoorOptions) {}

  /** A first factor that satisfies MFA by itself always gets its session: the type says so. */
  completeSignIn(
    environment: Environment,
    attempt: Extract<SignInAttempt, { firstFactor: SelfSufficientFactor }>,
    context: RequestContext,
  ): Promise<SessionStarted>;
  completeSignIn(environment: Environment, attempt: SignInAttempt, context: RequestContext): Promise<DoorOutcome>;
  async completeSignIn(environment: Environment, attempt: SignInAttempt, context: RequestContext): Promise<DoorOutcome> {
    if (attempt.firstFactor === 'handoff') return this.start(environment, attempt.userId, { carried: attempt.carried }, context);
    // An actor session skips the second factor (SKIPS_SECOND_FACTOR) and carries who acts.
    if (attempt.firstFactor === 'actor')
      return this.start(environment, attempt.userId, { verified: ['actor'], actor: attempt.actor.sub }, context);
    const asked = await secondFactorRule(environment.settings.mfa, [attempt.firstFactor], () =>
      this.options.secondFactorsOf(environment, attempt.userId),
    );
    const proofWrites = attempt.firstFactor === 'passkey' || attempt.firstFactor === 'pwd' ? attempt.proofWrites : undefined;
    if (!asked) return this.start(environment, attempt.userId, { verified: [attempt.firstFactor] }, context, proofWrites);
    // A passkey's proof writes spend its challenge: they are never dropped, and a passkey satisfies MFA by itself.
    if (attempt.firstFactor === 'passkey') throw new Error('A passkey must satisfy MFA by itself.');
    return this.issueAttempt(environment, attempt.userId, [attempt.firstFactor], asked, proofWrites);
  }

  /** The second step succeeded (auth/second-factor.ts spent its attempt): the session, with both factors verified now. */
  completeSecondFactor(
    environment: Environment,
    done: { userId: string; firstFactors: readonly Amr[]; secondFactor: Amr },
    context: RequestContext,
  ): Promise<SessionStarted> {
    return this.start(environment, done.userId, { verified: [...done.firstFactors, done.secondFactor] }, context);
  }

  /**
   * Stores the attempt (only the hash of its id: the id is the bearer of the first factor). With a
   * proof, in one transaction after the user's row (the order of a revoke-all, which deletes
   * attempts): the proof refuses, or the attempt exists before any later revoke-all runs.
   */
  private async issueAttempt(
    environment: Environment,
    userId: string,
    firstFactors: readonly FirstFactor[],
    asked: SecondFactorAsk,
    proof?: ProofWrites,
  ): Promise<SecondFactorNeeded> {
    const attemptId = newSecret('sia_', 24);
    const now = this.options.now();
    const { store } = this.options;
    await sweepSignInAttempts(store.db, environment.id, now);
    const row = {
      id: sha256Hex(attemptId),
      userId,
      kind: asked.status === 'needs_second_factor' ? ('second_factor' as const) : ('setup' as const),
      firstFactors,
      createdAt: now,
      expiresAt: now + ATTEMPT_TTL_MS,
    };
    if (!proof) await insertSignInAttempt(store.db, environment.id, row);
    else {
      await inTransaction(store.db, async (tx) => {
        await lockSessionsOwner(store, tx, environment.id, userId);
        if (!(await proofHolds(tx, proof.writes))) throw proof.refusal();
        await insertSignInAttempt(tx, environment.id, row);
      });
    }
    return { status: asked.status, attemptId, factors: asked.factors };
  }

  private async start(
    environment: Environment,
    userId: string,
    proof: { verified: readonly Amr[]; actor?: string } | { carried: SessionFactors },
    context: RequestContext,
    proofWrites?: ProofWrites,
  ): Promise<SessionStarted> {
    const { tokens, user } = await this.options.starter.start(environment, userId, proof, context, proofWrites);
    if (this.options.signedIn) await this.options.signedIn(environment, user);
    return { session: tokens, user };
  }

  /**
   * A hosted page hands its signed-in user to the application: the redirect URL (origin lock) with
   * `#__gh_handoff=<token>`; only the token's hash is stored.
   */
  async handOff(
    environment: Environment,
    session: { userId: string; sessionId: string },
    redirectUrl: string,
  ): Promise<{ redirectUrl: string }> {
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
