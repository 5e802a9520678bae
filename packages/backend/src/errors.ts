/** Why a token was refused. Stable strings: branch on them, show the message to developers. */
export type TokenVerificationErrorReason =
  | 'token-invalid'
  | 'token-expired'
  | 'token-not-active-yet'
  | 'signature-invalid'
  | 'issuer-invalid'
  | 'authorized-party-invalid'
  | 'jwk-kid-mismatch'
  | 'jwks-unavailable'
  /** A valid kind of token that this call does not accept (a machine token where a session's is expected). */
  | 'token-type-not-accepted'
  /** An API key that Gatehouse does not know, or that was revoked or has expired. */
  | 'api-key-invalid'
  /** Gatehouse could not be asked about an API key (network, timeout, 5xx). */
  | 'api-key-unavailable';

export class TokenVerificationError extends Error {
  override readonly name = 'TokenVerificationError';
  constructor(
    readonly reason: TokenVerificationErrorReason,
    message: string,
  ) {
    super(message);
  }
}
