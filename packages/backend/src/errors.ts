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
  | 'token-type-not-accepted';

export class TokenVerificationError extends Error {
  override readonly name = 'TokenVerificationError';
  constructor(
    readonly reason: TokenVerificationErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Why verifyApiKey refused: `api-key-invalid` (unknown, revoked or expired) or `api-key-unavailable`
 * (Gatehouse could not be asked: network, timeout, an unexpected answer).
 */
export type ApiKeyVerificationErrorReason = 'api-key-invalid' | 'api-key-unavailable';

export class ApiKeyVerificationError extends Error {
  override readonly name = 'ApiKeyVerificationError';
  constructor(
    readonly reason: ApiKeyVerificationErrorReason,
    message: string,
  ) {
    super(message);
  }
}
