/** Why a token was refused. Stable strings: branch on them, show the message to developers. */
export type TokenVerificationErrorReason =
  | 'token-invalid'
  | 'token-expired'
  | 'token-not-active-yet'
  | 'signature-invalid'
  | 'issuer-invalid'
  | 'authorized-party-invalid'
  | 'jwk-kid-mismatch'
  | 'jwks-unavailable';

export class TokenVerificationError extends Error {
  override readonly name = 'TokenVerificationError';
  constructor(
    readonly reason: TokenVerificationErrorReason,
    message: string,
  ) {
    super(message);
  }
}
