import type { PasskeyResponse } from '@gatehouse/contract';
import type { AuthenticatorTransportFuture } from '@simplewebauthn/server';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { constantTimeEqual } from '../lib/crypto.js';
import { apiError, type ApiError } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import { verifyAssertion } from './assertion.js';
import * as q from './queries.js';
import { originAccepted } from './relying-party.js';

/**
 * What the authentication ceremonies share (a user's own attempt, a discoverable sign-in): their
 * one refusal, the client's origin, and the checks of an assertion against a challenge.
 */

type Db = Kysely<Database> | Transaction<Database>;

const INVALID = 'This passkey could not be verified. Try again, or sign in another way.';

/** The one refusal of an assertion, whatever failed: nothing tells a prober which check it was. */
export function invalid(): ApiError {
  return apiError('invalid_credentials', INVALID);
}

/** The origin the browser wrote into the client data, if any. */
export function clientOrigin(response: PasskeyResponse): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
    const origin = (data as { origin?: unknown }).origin;
    return typeof origin === 'string' ? origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The checks of an assertion against a challenge: a credential of this environment (of the
 * challenge's user when it names one), the owner's user handle, an accepted origin, the RP ID,
 * user presence and verification, the counter rule and the signature. 401 invalid_credentials otherwise.
 */
export async function checkAssertion(
  db: Db,
  environment: Environment,
  challenge: Pick<q.ChallengeRow, 'challenge' | 'rp_id' | 'user_id'>,
  response: PasskeyResponse,
): Promise<{ passkey: q.PasskeyRow; info: { newCounter: number; backedUp: boolean } }> {
  if (response.id !== response.rawId) throw invalid();
  const passkey = await q.findByCredentialIdWithHandle(db, environment.id, response.id);
  if (!passkey || (challenge.user_id !== null && passkey.user_id !== challenge.user_id)) throw invalid();
  const handle = response.response.userHandle;
  // A discoverable sign-in learns its user from the handle: it must be there, and the owner's.
  if (handle || challenge.user_id === null) {
    const owner = passkey.owner_handle;
    if (!handle || !owner || !constantTimeEqual(handle.replace(/=+$/, ''), owner)) throw invalid();
  }
  const origin = clientOrigin(response);
  if (!origin || !originAccepted(environment, challenge.rp_id, origin)) throw invalid();
  try {
    const info = verifyAssertion({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRpId: challenge.rp_id,
      credential: { publicKey: passkey.public_key, counter: Number(passkey.counter) },
    });
    return { passkey, info };
  } catch {
    throw invalid();
  }
}

export function transportsOf(json: string): AuthenticatorTransportFuture[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? (value.filter((t) => typeof t === 'string') as AuthenticatorTransportFuture[]) : [];
  } catch {
    return [];
  }
}
