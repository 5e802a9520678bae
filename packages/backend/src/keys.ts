import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

/** The signature algorithms Gatehouse signs with. Nothing else ever verifies: no `none`, no HMAC. */
export type TokenAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

/** A public key ready for the hot path: parsed once, with the one algorithm it may verify. */
export interface VerificationKey {
  alg: TokenAlgorithm;
  key: KeyObject;
  /** The exact length a valid signature has, checked before verifying. */
  signatureLength: number;
  kid: string | undefined;
}

/** A JWK with the members a JWKS entry carries. */
export type Jwk = JsonWebKey & { kid?: string; alg?: string; use?: string };

const MIN_RSA_BITS = 2048;

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

function signatureLengthOf(alg: TokenAlgorithm, key: KeyObject): number {
  return alg === 'RS256' ? (key.asymmetricKeyDetails?.modulusLength ?? 0) / 8 : 64;
}

function fromKeyObject(key: KeyObject, declaredAlg: string | undefined, kid: string | undefined): VerificationKey {
  const alg = algorithmOf(key);
  // A key published for another algorithm than its own type allows is a misconfiguration or an
  // attack (e.g. an RSA key labelled HS256): refuse the key rather than guess.
  if (declaredAlg !== undefined && declaredAlg !== alg) {
    throw new Error(`The key says "alg": "${declaredAlg}", but a key of its type verifies ${alg} only.`);
  }
  return { alg, key, signatureLength: signatureLengthOf(alg, key), kid };
}

/** Imports one public JWK. Throws for symmetric (`oct`) keys, private members, or a mismatched `alg`. */
export function importJwk(jwk: Jwk): VerificationKey {
  if (typeof jwk !== 'object' || jwk === null) throw new Error('A JWK must be an object.');
  if (jwk.kty === 'oct') throw new Error('Symmetric (HMAC) keys never verify Gatehouse tokens.');
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new Error(`The key is for "use": "${jwk.use}", not for signatures.`);
  // Only the public members: a JWK that also carries a private part would otherwise import as private.
  const members = jwk.kty === 'RSA' ? ['kty', 'n', 'e'] : jwk.kty === 'EC' ? ['kty', 'crv', 'x', 'y'] : ['kty', 'crv', 'x'];
  const publicOnly = Object.fromEntries(members.map((name) => [name, jwk[name]])) as JsonWebKey;
  const key = createPublicKey({ key: publicOnly, format: 'jwk' });
  return fromKeyObject(key, jwk.alg, typeof jwk.kid === 'string' ? jwk.kid : undefined);
}

/** Imports the networkless `jwtKey`: a PEM (SPKI, PKCS#1 or a certificate) or a JWK, as an object or JSON text. */
export function importJwtKey(jwtKey: string | Jwk): VerificationKey {
  if (typeof jwtKey !== 'string') return importJwk(jwtKey);
  const text = jwtKey.trim();
  if (text.startsWith('{')) return importJwk(JSON.parse(text) as Jwk);
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new Error("jwtKey is a private key. Give the public key (the PEM or JWK from the environment's JWKS).");
  }
  return fromKeyObject(createPublicKey(text), undefined, undefined);
}

/**
 * Checks a JWS signature with the key's own algorithm. ES256 signatures are the raw r‖s pair that
 * JWS uses (IEEE P1363), not DER.
 */
export function verifySignature(key: VerificationKey, data: Buffer, signature: Buffer): boolean {
  if (signature.length !== key.signatureLength) return false;
  switch (key.alg) {
    case 'RS256':
      return verify('sha256', data, key.key, signature);
    case 'ES256':
      return verify('sha256', data, { key: key.key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'EdDSA':
      return verify(null, data, key.key, signature);
  }
}
