import type { webcrypto } from 'node:crypto';
import { MIN_RSA_BITS, type Jwk, type TokenAlgorithm, type VerificationKey } from './key-types.js';
import { fromBase64url } from './runtime.js';

type CryptoKey = webcrypto.CryptoKey;
type SubtleCrypto = webcrypto.SubtleCrypto;
type Algorithm = webcrypto.Algorithm;

/**
 * The same keys on WebCrypto, for runtimes without node:crypto. Each key type imports with the one
 * algorithm it may verify, so the rules are node's: RSA is RS256 (2048 bits or more), P-256 is
 * ES256, Ed25519 is EdDSA, and nothing else imports.
 */
const IMPORT: Record<TokenAlgorithm, webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams | Algorithm> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  EdDSA: { name: 'Ed25519' },
};
const VERIFY: Record<TokenAlgorithm, Algorithm | webcrypto.EcdsaParams> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5' },
  // WebCrypto's ECDSA signature is r‖s, as JWS's is.
  ES256: { name: 'ECDSA', hash: 'SHA-256' },
  EdDSA: { name: 'Ed25519' },
};

function subtle(): SubtleCrypto {
  const value = (globalThis as unknown as { crypto?: webcrypto.Crypto }).crypto?.subtle;
  if (!value) throw new Error('This runtime has neither node:crypto nor WebCrypto (crypto.subtle), so no token can be verified here.');
  return value;
}

function algorithmOfJwk(jwk: Jwk): TokenAlgorithm {
  if (jwk.kty === 'RSA') {
    const bits = typeof jwk.n === 'string' ? fromBase64url(jwk.n).length * 8 : 0;
    if (bits < MIN_RSA_BITS) throw new Error(`RSA keys shorter than ${MIN_RSA_BITS} bits are not accepted (this one has ${bits}).`);
    return 'RS256';
  }
  if (jwk.kty === 'EC') {
    if (jwk.crv === 'P-256') return 'ES256';
    throw new Error(`EC keys must be on P-256 (ES256); this one is on ${String(jwk.crv ?? 'an unknown curve')}.`);
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  throw new Error(`Keys of type ${String(jwk.kty)} are not accepted; Gatehouse signs with RSA, P-256 or Ed25519.`);
}

function describe(key: CryptoKey, alg: TokenAlgorithm, kid: string | undefined): VerificationKey {
  const bits = (key.algorithm as webcrypto.RsaHashedKeyAlgorithm).modulusLength ?? 0;
  if (alg === 'RS256' && bits < MIN_RSA_BITS) {
    throw new Error(`RSA keys shorter than ${MIN_RSA_BITS} bits are not accepted (this one has ${bits}).`);
  }
  return { alg, web: key, signatureLength: alg === 'RS256' ? bits / 8 : 64, kid };
}

export async function importWebJwk(publicOnly: Jwk, declaredAlg: string | undefined, kid: string | undefined): Promise<VerificationKey> {
  const alg = algorithmOfJwk(publicOnly);
  if (declaredAlg !== undefined && declaredAlg !== alg) {
    throw new Error(`The key says "alg": "${declaredAlg}", but a key of its type verifies ${alg} only.`);
  }
  const key = await subtle().importKey('jwk', publicOnly as webcrypto.JsonWebKey, IMPORT[alg], false, ['verify']);
  return describe(key, alg, kid);
}

/** An SPKI PEM (`BEGIN PUBLIC KEY`): the key type is whichever of the three imports it. */
export async function importWebPem(pem: string): Promise<VerificationKey> {
  const match = /^-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----$/.exec(pem);
  if (!match) {
    throw new Error('Without node:crypto, jwtKey must be a JWK or an SPKI PEM ("-----BEGIN PUBLIC KEY-----"), not a certificate or PKCS#1.');
  }
  const der = fromBase64url(match[1]!.replace(/\s+/g, '').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
    let key: CryptoKey;
    try {
      key = await subtle().importKey('spki', der as Uint8Array<ArrayBuffer>, IMPORT[alg], false, ['verify']);
    } catch {
      continue;
    }
    return describe(key, alg, undefined);
  }
  throw new Error('The PEM is not an RSA, P-256 or Ed25519 public key; Gatehouse signs with those only.');
}

export function verifyWeb(key: CryptoKey, alg: TokenAlgorithm, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return subtle()
    .verify(VERIFY[alg], key, signature as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>)
    .catch(() => false);
}
