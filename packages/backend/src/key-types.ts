import type { JsonWebKey, KeyObject, webcrypto } from 'node:crypto';

// What the key importers (keys-node.ts, keys-web.ts) and their dispatcher (keys.ts) share.

/** The signature algorithms Gatehouse signs with. Nothing else ever verifies: no `none`, no HMAC. */
export type TokenAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

/**
 * A public key ready for the hot path: parsed once, with the one algorithm it may verify. A
 * `KeyObject` where node:crypto is present (verification is then synchronous), else a WebCrypto key.
 */
export interface VerificationKey {
  alg: TokenAlgorithm;
  node?: KeyObject;
  web?: webcrypto.CryptoKey;
  /** The exact length a valid signature has, checked before verifying. */
  signatureLength: number;
  kid: string | undefined;
}

/** A JWK with the members a JWKS entry carries. */
export type Jwk = JsonWebKey & { kid?: string; alg?: string; use?: string };

export const MIN_RSA_BITS = 2048;
