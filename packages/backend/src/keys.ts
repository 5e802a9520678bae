import { importNodeJwk, importNodePem, verifyNode } from './keys-node.js';
import { importWebJwk, importWebPem, verifyWeb } from './keys-web.js';
import { nodeCrypto } from './runtime.js';
import type { Jwk, VerificationKey } from './key-types.js';

export { MIN_RSA_BITS, type Jwk, type TokenAlgorithm, type VerificationKey } from './key-types.js';

/** Imports one public JWK. Throws for symmetric (`oct`) keys, private members, or a mismatched `alg`. */
export function importJwk(jwk: Jwk): VerificationKey | Promise<VerificationKey> {
  if (typeof jwk !== 'object' || jwk === null) throw new Error('A JWK must be an object.');
  if (jwk.kty === 'oct') throw new Error('Symmetric (HMAC) keys never verify Gatehouse tokens.');
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new Error(`The key is for "use": "${jwk.use}", not for signatures.`);
  // Only the public members: a JWK that also carries a private part would otherwise import as private.
  const members = jwk.kty === 'RSA' ? ['kty', 'n', 'e'] : jwk.kty === 'EC' ? ['kty', 'crv', 'x', 'y'] : ['kty', 'crv', 'x'];
  const publicOnly = Object.fromEntries(members.map((name) => [name, jwk[name]])) as Jwk;
  const kid = typeof jwk.kid === 'string' ? jwk.kid : undefined;
  return nodeCrypto ? importNodeJwk(publicOnly, jwk.alg, kid) : importWebJwk(publicOnly, jwk.alg, kid);
}

/** Imports the networkless `jwtKey`: a PEM (SPKI, PKCS#1 or a certificate) or a JWK, as an object or JSON text. */
export function importJwtKey(jwtKey: string | Jwk): VerificationKey | Promise<VerificationKey> {
  if (typeof jwtKey !== 'string') return importJwk(jwtKey);
  const text = jwtKey.trim();
  if (text.startsWith('{')) return importJwk(JSON.parse(text) as Jwk);
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new Error("jwtKey is a private key. Give the public key (the PEM or JWK from the environment's JWKS).");
  }
  return nodeCrypto ? importNodePem(text) : importWebPem(text);
}

/** Checks a JWS signature with the key's own algorithm: synchronous on node:crypto, a promise on WebCrypto. */
export function verifySignature(key: VerificationKey, data: Uint8Array, signature: Uint8Array): boolean | Promise<boolean> {
  if (signature.length !== key.signatureLength) return false;
  if (key.node) return verifyNode(key.node, key.alg, data, signature);
  return verifyWeb(key.web!, key.alg, data, signature);
}
