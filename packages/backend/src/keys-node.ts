import type { JsonWebKey, KeyObject } from 'node:crypto';
import { MIN_RSA_BITS, type TokenAlgorithm, type VerificationKey } from './key-types.js';
import { nodeCrypto } from './runtime.js';

const crypto = () => nodeCrypto!;

/**
 * The algorithm a key is for, from the key itself: RSA → RS256, P-256 → ES256, Ed25519 → EdDSA.
 * Any other key (symmetric, another curve, short RSA) is refused here, so it can never verify.
 */
function algorithmOf(key: KeyObject): TokenAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa': {
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
      if (bits < MIN_RSA_BITS) throw new Error(`RSA keys shorter than ${MIN_RSA_BITS} bits are not accepted (this one has ${bits}).`);
      return 'RS256';
    }
    case 'ec':
      if (key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
      throw new Error(`EC keys must be on P-256 (ES256); this one is on ${key.asymmetricKeyDetails?.namedCurve ?? 'an unknown curve'}.`);
    case 'ed25519':
      return 'EdDSA';
    default:
      throw new Error(`Keys of type ${key.asymmetricKeyType ?? key.type} are not accepted; Gatehouse signs with RSA, P-256 or Ed25519.`);
  }
}

export function fromKeyObject(key: KeyObject, declaredAlg: string | undefined, kid: string | undefined): VerificationKey {
  const alg = algorithmOf(key);
  // A key published for another algorithm than its own type allows is a misconfiguration or an
  // attack (e.g. an RSA key labelled HS256): refuse the key rather than guess.
  if (declaredAlg !== undefined && declaredAlg !== alg) {
    throw new Error(`The key says "alg": "${declaredAlg}", but a key of its type verifies ${alg} only.`);
  }
  const signatureLength = alg === 'RS256' ? (key.asymmetricKeyDetails?.modulusLength ?? 0) / 8 : 64;
  return { alg, node: key, signatureLength, kid };
}

export function importNodeJwk(publicOnly: JsonWebKey, declaredAlg: string | undefined, kid: string | undefined): VerificationKey {
  return fromKeyObject(crypto().createPublicKey({ key: publicOnly, format: 'jwk' }), declaredAlg, kid);
}

export function importNodePem(pem: string): VerificationKey {
  return fromKeyObject(crypto().createPublicKey(pem), undefined, undefined);
}

/** ES256 signatures are the raw r‖s pair that JWS uses (IEEE P1363), not DER. */
export function verifyNode(key: KeyObject, alg: TokenAlgorithm, data: Uint8Array, signature: Uint8Array): boolean {
  const { verify } = crypto();
  switch (alg) {
    case 'RS256':
      return verify('sha256', data, key, signature);
    case 'ES256':
      return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'EdDSA':
      return verify(null, data, key, signature);
  }
}
