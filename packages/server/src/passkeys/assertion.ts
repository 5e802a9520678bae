/**
 * A `webauthn.get` assertion verified with `node:crypto`, synchronously: the same checks, in the
 * same order, as @simplewebauthn/server's verifyAuthenticationResponse (which parses the bytes here
 * too), without its WebCrypto jobs. That library hashes the client data and the RP ID and imports
 * the key as asynchronous WebCrypto jobs at every sign-in: a fifth of a passkey sign-in's CPU
 * (docs/performance.md). Here the hashes are synchronous and each credential's key is imported once.
 */
import type { PasskeyResponse } from '@gatehouse/contract';
import { decodeCredentialPublicKey, isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { constants, createHash, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';

export interface AssertionInput {
  response: PasskeyResponse;
  expectedChallenge: string;
  expectedOrigin: string;
  expectedRpId: string;
  /** The stored credential: its COSE public key (base64url) and signature counter. */
  credential: { publicKey: string; counter: number };
}

export interface VerifiedAssertion {
  newCounter: number;
  userVerified: boolean;
  backedUp: boolean;
}

/** Why an assertion was refused (never shown to the caller, who sees invalid_credentials). */
export class AssertionRefused extends Error {}

function refuse(reason: string): never {
  throw new AssertionRefused(reason);
}

// COSE (RFC 9053) labels and values of the three algorithms registration accepts.
const KTY = 1;
const ALG = 3;
const CRV = -1;
const X = -2;
const Y = -3;
const RSA_N = -1;
const RSA_E = -2;
const KTY_OKP = 1;
const KTY_EC2 = 2;
const KTY_RSA = 3;
const ES256 = -7;
const EDDSA = -8;
const RS256 = -257;
const CRV_P256 = 1;
const CRV_ED25519 = 6;

interface CredentialKey {
  alg: typeof ES256 | typeof EDDSA | typeof RS256;
  key: KeyObject;
}

type CoseMap = Map<number, number | Uint8Array>;

function bytes(cose: CoseMap, label: number): string {
  const value = cose.get(label);
  if (!(value instanceof Uint8Array)) refuse(`the credential's key has no ${label} parameter`);
  return Buffer.from(value).toString('base64url');
}

function importCoseKey(publicKey: string): CredentialKey {
  const cose = decodeCredentialPublicKey(Buffer.from(publicKey, 'base64url')) as unknown as CoseMap;
  const kty = cose.get(KTY);
  const alg = cose.get(ALG);
  if (kty === KTY_EC2 && alg === ES256 && cose.get(CRV) === CRV_P256) {
    return { alg, key: createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: bytes(cose, X), y: bytes(cose, Y) }, format: 'jwk' }) };
  }
  if (kty === KTY_OKP && alg === EDDSA && cose.get(CRV) === CRV_ED25519) {
    return { alg, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: bytes(cose, X) }, format: 'jwk' }) };
  }
  if (kty === KTY_RSA && alg === RS256) {
    const n = unsigned(cose, RSA_N);
    const e = unsigned(cose, RSA_E);
    // 2048 to 4096 bits, exponent 65537, as every authenticator makes them: a huge exponent would
    // make each check of a forged assertion cost the event loop milliseconds.
    if (n.length < 256 || n.length > 512) refuse('an RSA key outside 2048 to 4096 bits');
    if (e.length !== 3 || e[0] !== 1 || e[1] !== 0 || e[2] !== 1) refuse('an RSA key whose exponent is not 65537');
    return { alg, key: createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') }, format: 'jwk' }) };
  }
  refuse(`unsupported credential key (kty ${String(kty)}, alg ${String(alg)})`);
}

/** An unsigned big-endian integer parameter, without leading zero bytes. */
function unsigned(cose: CoseMap, label: number): Buffer {
  const value = cose.get(label);
  if (!(value instanceof Uint8Array)) refuse(`the credential's key has no ${label} parameter`);
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  return Buffer.from(value.subarray(start));
}

/**
 * Checks, at registration, that a credential's COSE key is one this module will verify with (its
 * type with its one algorithm; RSA of 2048–4096 bits with exponent 65537); throws AssertionRefused.
 */
export function checkCredentialKey(publicKey: string): void {
  try {
    importCoseKey(publicKey);
  } catch (error) {
    if (error instanceof AssertionRefused) throw error;
    refuse('its public key cannot be imported');
  }
}

/**
 * Imported keys by their stored COSE form: a credential's key never changes, so it is imported once.
 * Only keys that have just verified a signature are kept, and only keys of a sane size (an RSA-4096
 * key is about 720 characters): registered credentials alone never fill it.
 */
const KEY_CACHE_SIZE = 2_000;
const MAX_CACHED_KEY_LENGTH = 1_024;
const keyCache = new Map<string, CredentialKey>();

function credentialKey(publicKey: string): { key: CredentialKey; cached: boolean } {
  const cached = keyCache.get(publicKey);
  if (cached) return { key: cached, cached: true };
  try {
    return { key: importCoseKey(publicKey), cached: false };
  } catch (error) {
    if (error instanceof AssertionRefused) throw error;
    refuse("the credential's stored key cannot be imported");
  }
}

/** How many credential keys are cached (for tests and diagnostics). */
export function cachedKeyCount(): number {
  return keyCache.size;
}

function remember(publicKey: string, key: CredentialKey): void {
  if (publicKey.length > MAX_CACHED_KEY_LENGTH) return;
  if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value!);
  keyCache.set(publicKey, key);
}

const rpIdHashes = new Map<string, Buffer>();

function rpIdHash(rpId: string): Buffer {
  let hash = rpIdHashes.get(rpId);
  if (!hash) {
    hash = createHash('sha256').update(rpId).digest();
    // RP IDs are the environments' domains and localhost: few, but bounded all the same.
    if (rpIdHashes.size >= KEY_CACHE_SIZE) rpIdHashes.clear();
    rpIdHashes.set(rpId, hash);
  }
  return hash;
}

function signatureValid(key: CredentialKey, data: Buffer, signature: Buffer): boolean {
  try {
    // WebAuthn's ECDSA signatures are DER (ASN.1), node:crypto's default for EC keys.
    if (key.alg === ES256) return verify('sha256', data, { key: key.key, dsaEncoding: 'der' }, signature);
    if (key.alg === EDDSA) return verify(null, data, key.key, signature);
    return verify('sha256', data, { key: key.key, padding: constants.RSA_PKCS1_PADDING }, signature);
  } catch {
    return false;
  }
}

/**
 * Verifies the assertion (type, challenge, origin, RP ID hash, user presence and verification, the
 * counter rule, the signature over authenticatorData ‖ SHA-256(clientDataJSON)); throws
 * AssertionRefused otherwise.
 */
export function verifyAssertion(input: AssertionInput): VerifiedAssertion {
  const { response, credential } = input;
  if (!response.id || response.id !== response.rawId) refuse('the credential id is missing or not base64url');
  if (response.type !== 'public-key') refuse('not a public-key credential');
  const { clientDataJSON, authenticatorData, signature } = response.response;
  if (typeof clientDataJSON !== 'string' || !isoBase64URL.isBase64URL(clientDataJSON)) refuse('clientDataJSON is not base64url');
  if (typeof authenticatorData !== 'string' || !isoBase64URL.isBase64URL(authenticatorData)) refuse('authenticatorData is not base64url');
  if (typeof signature !== 'string' || !isoBase64URL.isBase64URL(signature)) refuse('the signature is not base64url');

  const clientDataBytes = Buffer.from(clientDataJSON, 'base64url');
  let clientData: { type?: unknown; challenge?: unknown; origin?: unknown; tokenBinding?: unknown };
  try {
    clientData = JSON.parse(clientDataBytes.toString('utf8')) as typeof clientData;
  } catch {
    refuse('clientDataJSON is not JSON');
  }
  if (clientData === null || typeof clientData !== 'object') refuse('clientDataJSON is not an object');
  if (clientData.type !== 'webauthn.get') refuse('not an authentication (webauthn.get)');
  if (clientData.challenge !== input.expectedChallenge) refuse('another challenge');
  if (clientData.origin !== input.expectedOrigin) refuse('another origin');
  const binding = clientData.tokenBinding;
  if (binding !== undefined && binding !== null) {
    const status = typeof binding === 'object' ? (binding as { status?: unknown }).status : undefined;
    if (status !== 'present' && status !== 'supported' && status !== 'notSupported') refuse('an unexpected token binding');
  }

  const authData = Buffer.from(authenticatorData, 'base64url');
  let parsed: ReturnType<typeof parseAuthenticatorData>;
  try {
    parsed = parseAuthenticatorData(authData);
  } catch {
    refuse('malformed authenticatorData');
  }
  const expectedHash = rpIdHash(input.expectedRpId);
  if (parsed.rpIdHash.length !== expectedHash.length || !timingSafeEqual(parsed.rpIdHash, expectedHash)) refuse('another RP ID');
  if (!parsed.flags.up) refuse('user not present');
  if (!parsed.flags.uv) refuse('user not verified');
  if (parsed.flags.bs && !parsed.flags.be) refuse('backed up, yet not eligible for backup');
  // A counter that either side has started must grow: otherwise the credential may have been cloned.
  if ((parsed.counter > 0 || credential.counter > 0) && parsed.counter <= credential.counter) refuse('the counter did not grow');

  const signed = Buffer.concat([authData, createHash('sha256').update(clientDataBytes).digest()]);
  const { key, cached } = credentialKey(credential.publicKey);
  if (!signatureValid(key, signed, Buffer.from(signature, 'base64url'))) refuse('a bad signature');
  if (!cached) remember(credential.publicKey, key);
  return { newCounter: parsed.counter, userVerified: parsed.flags.uv, backedUp: parsed.flags.bs };
}
