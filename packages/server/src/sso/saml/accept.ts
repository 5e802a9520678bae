/**
 * The protocol decision after the signature: which request the response answers, and that it
 * answers it once. Storage stays behind `SamlReplayLedger`, so the rule is the same whichever store
 * keeps the pending requests.
 */
import { constantTimeEqual } from '../../lib/crypto.js';
import type { SpEndpoints } from './authn-request.js';
import type { IdpSettings } from './metadata.js';
import { SAML_CLOCK_SKEW_MS, SamlResponseError, type VerifiedAssertion, verifySamlResponse } from './response.js';

export interface SamlReplayLedger {
  /**
   * Marks the pending AuthnRequest `requestId` as answered, atomically. False when it is unknown,
   * expired, or already answered: a second response to one request is a replay.
   */
  consumeRequest(requestId: string): Promise<boolean>;
  /** Remembers an unsolicited assertion until `expiresAt`; false when it was seen before. */
  rememberAssertion(assertionId: string, expiresAt: number): Promise<boolean>;
}

export async function acceptSamlResponse(input: {
  samlResponse: string;
  idp: IdpSettings;
  sp: SpEndpoints;
  allowIdpInitiated: boolean;
  /** The request id of the start that RelayState maps to; null when RelayState named none. */
  expectedRequestId: string | null;
  ledger: SamlReplayLedger;
}): Promise<VerifiedAssertion> {
  const assertion = await verifySamlResponse(input.samlResponse, input.idp, input.sp);
  if (assertion.inResponseTo !== null) {
    // Bound to the browser that started it: a response to someone else's request, posted here
    // with this browser's RelayState, is refused (login swapping).
    if (input.expectedRequestId === null || !constantTimeEqual(assertion.inResponseTo, input.expectedRequestId)) {
      throw new SamlResponseError('request_mismatch', 'The response answers another sign-in than the one this browser started; start again.');
    }
    if (!(await input.ledger.consumeRequest(assertion.inResponseTo))) {
      throw new SamlResponseError('replayed', 'This sign-in was already completed or has expired; start again.');
    }
    return assertion;
  }
  if (!input.allowIdpInitiated) {
    throw new SamlResponseError('unsolicited', 'The response answers no request from Gatehouse, and this connection does not accept IdP-initiated sign-in.');
  }
  if (input.expectedRequestId !== null) {
    // RelayState named a start of ours: only the answer to its request completes it. An unsolicited
    // assertion posted with it would leave the start unconsumed, to be completed again and again.
    throw new SamlResponseError('request_mismatch', 'The response answers no request, but this browser started one; start again.');
  }
  // Remembered as long as the validator would still accept it: NotOnOrAfter plus the clock skew.
  // Forgetting it at NotOnOrAfter would let a replay through during the last 5 s of grace.
  if (!(await input.ledger.rememberAssertion(assertion.assertionId, assertion.notOnOrAfter + SAML_CLOCK_SKEW_MS))) {
    throw new SamlResponseError('replayed', 'This assertion was already used; sign in again from the identity provider.');
  }
  return assertion;
}

/** A ledger in one process's memory: for tests and a single node without shared storage. */
export class MemorySamlLedger implements SamlReplayLedger {
  private readonly pending = new Map<string, number>();
  private readonly seen = new Map<string, number>();

  addRequest(requestId: string, expiresAt: number): void {
    this.pending.set(requestId, expiresAt);
  }

  async consumeRequest(requestId: string): Promise<boolean> {
    const expiresAt = this.pending.get(requestId);
    this.pending.delete(requestId);
    return expiresAt !== undefined && expiresAt > Date.now();
  }

  async rememberAssertion(assertionId: string, expiresAt: number): Promise<boolean> {
    const now = Date.now();
    for (const [id, until] of this.seen) if (until <= now) this.seen.delete(id);
    if (this.seen.has(assertionId)) return false;
    this.seen.set(assertionId, expiresAt);
    return true;
  }
}
