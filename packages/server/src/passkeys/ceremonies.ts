import type { PasskeyResponse } from '@gatehouse/contract';
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { LockedUser } from '../identity/service.js';
import { newId, randomText } from '../lib/crypto.js';
import { apiError, ApiError } from '../lib/errors.js';
import type { EnvironmentId } from '../lib/ids.js';
import type { Environment } from '../tenancy/settings.js';
import { checkCredentialKey } from './assertion.js';
import { checkAssertion, clientOrigin, invalid, transportsOf } from './assertion-checks.js';
import * as q from './queries.js';
import { originAccepted, rpIdFor } from './relying-party.js';
import type { SignInChallenge, SignInChallenges } from './sign-in-challenges.js';
import type { ProofWrites } from '../sessions/proof-writes.js';

type Db = Kysely<Database> | Transaction<Database>;

/** How long an options call's challenge can be answered (DESIGN "Passkey challenges"). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
const SWEEP_INTERVAL_MS = 60_000;
/**
 * How long an answered sign-in's row outlives its attempt id: the id's expiry is read by the
 * verifying node's clock, the row is swept by any node's, and a row swept while some node still
 * opens the id would let the id be answered again. Nodes' clocks must differ by less than this.
 */
const SPENT_KEPT_MS = CHALLENGE_TTL_MS;
/** Passkeys one account may hold (Clerk allows 10; a family of devices and security keys fits in 25). */
export const MAX_PASSKEYS_PER_USER = 25;
/**
 * The longest COSE public key accepted at registration (base64url): an RSA-4096 key is about 720
 * characters, P-256 and Ed25519 keys about 100; anything longer is padding nobody needs to store.
 */
const MAX_PUBLIC_KEY_LENGTH = 1_024;
/** COSE algorithms offered at registration: ES256, EdDSA, RS256. */
export const PASSKEY_ALGORITHMS = [-7, -8, -257];

const REGISTRATION_FAILED = 'The passkey could not be registered: ';

/** The attempt key of a session's own ceremonies: one live challenge per session and purpose. */
export function sessionAttempt(kind: 'registration' | 'reverify', sessionId: string): string {
  return `${kind}:${sessionId}`;
}

/** A credential just proven by a registration ceremony, not yet stored. */
export interface NewCredential {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
}

/** Who a verified assertion belongs to. */
export interface AssertedPasskey {
  userId: string;
  passkeyId: string;
}

/** A discoverable sign-in's verified assertion, and the writes that make it count. */
export interface PasskeySignIn extends AssertedPasskey {
  challenge: SignInChallenge;
  proofWrites: ProofWrites;
}

/**
 * The WebAuthn ceremonies, on @simplewebauthn/server, with the challenges in the database:
 * registration and authentication options, each bound to an attempt (a sign-in, a session's
 * registration or reverification, a second-factor attempt); a new options call voids the previous
 * challenge of its attempt, and any verify (right or wrong) spends it by compare-and-set. The RP ID
 * is fixed at the options call from the request's Origin (relying-party.ts) and stored with the
 * challenge. The second-factor step of the door calls `registrationOptions`/`verifyRegistration`
 * and `authenticationOptions`/`verifyAuthentication` with its own attempt id and user.
 */
export class PasskeyCeremonies {
  private readonly lastSweep = new Map<EnvironmentId, number>();

  constructor(private readonly options: { store: Store; now: () => number; signIns: SignInChallenges }) {}

  private get db() {
    return this.options.store.db;
  }

  private async issue(
    environment: Environment,
    attemptId: string,
    purpose: 'registration' | 'authentication',
    userId: string | null,
    rpId: string,
    challenge: string,
  ): Promise<void> {
    const now = this.options.now();
    await this.sweepIfDue(environment.id, now);
    await q.putChallenge(this.db, {
      environment_id: environment.id,
      attempt_id: attemptId,
      purpose,
      user_id: userId,
      challenge,
      rp_id: rpId,
      created_at: now,
      expires_at: now + CHALLENGE_TTL_MS,
    });
  }

  /**
   * Deletes the environment's expired challenges at most once a minute per node: options calls are
   * unauthenticated and frequent, and an expired challenge is refused whether or not it was swept.
   */
  private async sweepIfDue(environmentId: EnvironmentId, now: number): Promise<void> {
    const last = this.lastSweep.get(environmentId);
    if (last !== undefined && now - last < SWEEP_INTERVAL_MS && now >= last) return;
    if (this.lastSweep.size >= 10_000) this.lastSweep.clear();
    this.lastSweep.set(environmentId, now);
    await q.deleteExpiredChallenges(this.db, environmentId, now);
  }

  /**
   * Spends the attempt's challenge (whatever the outcome that follows) and answers it when it was
   * live, of this purpose and for this user; undefined otherwise.
   */
  private async spend(environment: Environment, attemptId: string, purpose: 'registration' | 'authentication', userId: string) {
    // Another ceremony's challenge is neither used nor spent (takeChallenge matches purpose and
    // user): naming a registration's or another user's key must not let anyone burn it.
    const row = await q.takeChallenge(this.db, environment.id, attemptId, purpose, userId);
    if (!row || Number(row.expires_at) <= this.options.now()) return undefined;
    return row;
  }

  /** The user's random handle, made at their first registration (never the user id). */
  private async userHandle(environment: Environment, userId: string): Promise<string> {
    const existing = await q.findUserHandle(this.db, environment.id, userId);
    return existing ?? q.ensureUserHandle(this.db, environment.id, userId, randomText(32));
  }

  // ---- registration

  /** PublicKeyCredentialCreationOptions (JSON) for `user`, bound to `attemptId`. */
  async registrationOptions(
    environment: Environment,
    user: { id: string; email: string; displayName?: string | null },
    attemptId: string,
    requestOrigin: string | undefined,
    rpName: string,
  ): Promise<Record<string, unknown>> {
    const rpId = rpIdFor(environment, requestOrigin);
    const [handle, existing] = await Promise.all([this.userHandle(environment, user.id), q.listPasskeys(this.db, environment.id, user.id)]);
    const options = await generateRegistrationOptions({
      rpName,
      rpID: rpId,
      userID: Buffer.from(handle, 'base64url'),
      userName: user.email,
      userDisplayName: user.displayName || user.email,
      attestationType: 'none',
      timeout: CHALLENGE_TTL_MS,
      excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p.transports) })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    });
    await this.issue(environment, attemptId, 'registration', user.id, rpId, options.challenge);
    return options as unknown as Record<string, unknown>;
  }

  /**
   * Verifies a `webauthn.create` response for `userId` against the attempt's challenge (spent
   * either way). 400 invalid_request when it does not verify; the credential is not stored here.
   */
  async verifyRegistration(environment: Environment, userId: string, attemptId: string, response: PasskeyResponse): Promise<NewCredential> {
    const row = await this.spend(environment, attemptId, 'registration', userId);
    if (!row) {
      throw apiError(
        'invalid_request',
        `${REGISTRATION_FAILED}its challenge is unknown, used or expired. Ask for new options and try again.`,
      );
    }
    const origin = clientOrigin(response);
    if (!origin || !originAccepted(environment, row.rp_id, origin)) {
      throw apiError('invalid_request', `${REGISTRATION_FAILED}it was made on a page this environment does not accept for passkeys.`);
    }
    try {
      const result = await verifyRegistrationResponse({
        response: response as unknown as RegistrationResponseJSON,
        expectedChallenge: row.challenge,
        expectedOrigin: origin,
        expectedRPID: row.rp_id,
        expectedType: 'webauthn.create',
        requireUserVerification: true,
        requireUserPresence: true,
        supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
      });
      if (!result.verified) throw new Error('not verified');
      const { credential, credentialBackedUp } = result.registrationInfo;
      if (credential.id !== response.id) throw new Error('credential id mismatch');
      const publicKey = Buffer.from(credential.publicKey).toString('base64url');
      if (publicKey.length > MAX_PUBLIC_KEY_LENGTH) throw new Error('its public key is longer than any of ES256, EdDSA or RS256 needs');
      checkCredentialKey(publicKey);
      return {
        credentialId: credential.id,
        publicKey,
        counter: credential.counter,
        transports: (response.response.transports ?? []).slice(0, 16),
        backedUp: credentialBackedUp,
      };
    } catch (error) {
      throw apiError(
        'invalid_request',
        `${REGISTRATION_FAILED}${error instanceof Error ? error.message : 'the response did not verify'}. Ask for new options and try again.`,
      );
    }
  }

  /**
   * Stores a verified credential for the user, in the caller's transaction, which holds the user's
   * row locked (`LockedUser`: so the count of their passkeys holds); 409 when this environment knows its id.
   */
  async store(db: Db, environment: Environment, user: LockedUser, credential: NewCredential, name: string): Promise<q.PasskeyRow> {
    const userId = user.id;
    if (await q.findByCredentialId(db, environment.id, credential.credentialId)) throw duplicate();
    if ((await q.countPasskeys(db, environment.id, userId)) >= MAX_PASSKEYS_PER_USER) {
      throw apiError(
        'invalid_request',
        `This account has ${MAX_PASSKEYS_PER_USER} passkeys, the most it can have. Remove one it no longer uses, then add this one.`,
      );
    }
    const row: q.PasskeyRow = {
      environment_id: environment.id,
      id: newId('passkey', environment.id),
      user_id: userId,
      credential_id: credential.credentialId,
      public_key: credential.publicKey,
      counter: credential.counter,
      transports: JSON.stringify(credential.transports),
      backed_up: credential.backedUp ? 1 : 0,
      name,
      created_at: this.options.now(),
      last_used_at: null,
    };
    await q.insertPasskey(db, row);
    return row;
  }

  /** Removes every passkey of the user in the caller's transaction (an admin reset; an address proven for the first time). */
  async removeAllIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<boolean> {
    return q.deleteAllPasskeys(tx, environment.id, userId);
  }

  // ---- authentication

  /**
   * PublicKeyCredentialRequestOptions (JSON) for a user's own credentials, bound to one of their
   * attempts (a second factor, a reverification); a new call voids the attempt's previous challenge.
   */
  async authenticationOptions(
    environment: Environment,
    input: { attemptId: string; userId: string },
    requestOrigin: string | undefined,
  ): Promise<{ attemptId: string; options: Record<string, unknown> }> {
    const rpId = rpIdFor(environment, requestOrigin);
    const allow = await q.listPasskeys(this.db, environment.id, input.userId);
    const options = requestOptions(rpId, randomText(32), allow);
    await this.issue(environment, input.attemptId, 'authentication', input.userId, rpId, options.challenge);
    return { attemptId: input.attemptId, options };
  }

  /**
   * Options for a discoverable sign-in (no allowCredentials): a new attempt whose id carries its
   * challenge (sign-in-challenges.ts), so nothing is written until the verify.
   */
  signInOptions(environment: Environment, requestOrigin: string | undefined): { attemptId: string; options: Record<string, unknown> } {
    const rpId = rpIdFor(environment, requestOrigin);
    const issued = this.options.signIns.issue(environment, rpId, this.options.now() + CHALLENGE_TTL_MS);
    return { attemptId: issued.attemptId, options: requestOptions(rpId, issued.challenge, []) };
  }

  /**
   * Verifies a `webauthn.get` response against the user's attempt's challenge (spent either way),
   * and records the use. 401 invalid_credentials for anything but a passkey of theirs that verifies.
   */
  async verifyAuthentication(
    environment: Environment,
    attemptId: string,
    response: PasskeyResponse,
    userId: string,
  ): Promise<AssertedPasskey> {
    const row = await this.spend(environment, attemptId, 'authentication', userId);
    if (!row) throw invalid();
    const { passkey, info } = await checkAssertion(this.db, environment, { ...row, user_id: userId }, response);
    const recorded = await q.recordUse(this.db, environment.id, passkey.id, {
      expectedCounter: Number(passkey.counter),
      counter: info.newCounter,
      backedUp: info.backedUp,
      now: this.options.now(),
    });
    // Another use moved the counter meanwhile (with a non-zero counter only one of them can be
    // genuine), or the passkey was removed during the sign-in (a lost device): either way, no.
    if (!recorded) throw invalid();
    return { userId: passkey.user_id, passkeyId: passkey.id };
  }

  /**
   * Verifies a discoverable sign-in's assertion against the challenge its attempt id carries. The
   * challenge is spent and the use recorded by the answer's `proofWrites`, which the door runs in
   * the transaction that starts the session; they refuse when the attempt was answered already, or
   * when the counter moved meanwhile (the attempt then stays spent). A refusal here spends it at once.
   */
  async verifySignIn(environment: Environment, attemptId: string, response: PasskeyResponse): Promise<PasskeySignIn> {
    const now = this.options.now();
    // A made-up, foreign or expired attempt id has no challenge to spend.
    const challenge = this.options.signIns.open(environment, attemptId, now);
    if (!challenge) throw invalid();
    await this.sweepIfDue(environment.id, now);
    let checked: { passkey: q.PasskeyRow; info: { newCounter: number; backedUp: boolean } };
    try {
      checked = await checkAssertion(
        this.db,
        environment,
        { challenge: challenge.challenge, rp_id: challenge.rpId, user_id: null },
        response,
      );
    } catch (error) {
      await this.spendSignIn(environment, challenge);
      throw error;
    }
    const { passkey, info } = checked;
    const proofWrites = [
      this.spentRow(environment, challenge, now),
      q.recordUseQuery(this.db, {
        environmentId: environment.id,
        id: passkey.id,
        expectedCounter: Number(passkey.counter),
        counter: info.newCounter,
        backedUp: info.backedUp ? 1 : 0,
        now,
      }),
    ];
    // Answered already, another use moved the counter (only one of two uses of a cloned counter
    // value is genuine), or the passkey was removed during the sign-in: no session.
    return { userId: passkey.user_id, passkeyId: passkey.id, challenge, proofWrites: { writes: proofWrites, refusal: invalid } };
  }

  /** Records a sign-in's attempt as answered, on its own: after a refusal, so it cannot be answered again. */
  async spendSignIn(environment: Environment, challenge: SignInChallenge): Promise<void> {
    await this.db.executeQuery(this.spentRow(environment, challenge, this.options.now()));
  }

  /** The statement that records the attempt as answered: it changes one row the first time, none after. */
  private spentRow(environment: Environment, challenge: SignInChallenge, now: number) {
    return q.spendSignInQuery(this.db, {
      environment_id: environment.id,
      attempt_id: challenge.attemptId,
      challenge: challenge.challenge,
      rp_id: challenge.rpId,
      created_at: now,
      expires_at: challenge.expiresAt + SPENT_KEPT_MS,
    });
  }
}

/** PublicKeyCredentialRequestOptions as JSON: user verification required, as DESIGN fixes. */
function requestOptions(rpId: string, challenge: string, allow: q.PasskeyRow[]) {
  return {
    rpId,
    challenge,
    allowCredentials: allow.map((p) => ({ id: p.credential_id, type: 'public-key', transports: transportsOf(p.transports) })),
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
  };
}

export function duplicate(): ApiError {
  return apiError('conflict', 'This passkey is already registered in this environment. Use it to sign in, or remove it first.');
}
