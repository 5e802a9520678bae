import type { JsonWebKey } from 'node:crypto';
import type { GatehouseClaims, MachineClaims } from './claims.js';
import { TokenVerificationError, type TokenVerificationErrorReason } from './errors.js';
import { DEFAULT_JWKS_TIMEOUT_MS, jwksCacheFor, jwksCacheForIssuer } from './jwks.js';
import { importJwtKey, verifySignature, type Jwk, type TokenAlgorithm, type VerificationKey } from './keys.js';
import { base64urlText, fromBase64url, isCanonicalBase64url, utf8Bytes } from './runtime.js';

/** The kinds of JWT Gatehouse issues: a user's session token (`typ: "at+jwt"`) and a machine's (`typ: "m2m+jwt"`). */
export type JwtTokenType = 'session_token' | 'm2m_token';

export interface VerifyTokenOptions {
  /**
   * The kinds of token that verify; default `["session_token"]`, so a machine's token never passes
   * for a user's. Add `"m2m_token"` where machines may call.
   */
  acceptsToken?: readonly JwtTokenType[];
  /** `{baseUrl}/v1/environments/{environmentId}`: the token's `iss` must be exactly this. */
  issuer: string;
  /** Where the keys are published; default `{issuer}/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** Networkless mode: the environment's public key as a PEM or a JWK. No fetch at all. */
  jwtKey?: string | JsonWebKey;
  /** When set, a token whose `azp` is present and not one of these origins is refused. */
  authorizedParties?: string[];
  /** Tolerated clock difference for `exp`, `nbf` and `iat`, in ms; default 5000. */
  clockSkewInMs?: number;
  /** How long a JWKS fetch may take before it counts as failed, in ms; default 5000. */
  jwksTimeoutMs?: number;
}

const DEFAULT_CLOCK_SKEW_MS = 5_000;
/** Far above any token Gatehouse issues; refusing early bounds the work an attacker can cause. */
const MAX_TOKEN_LENGTH = 16_384;
const ACCEPTED_ALGORITHMS: ReadonlySet<string> = new Set<TokenAlgorithm>(['RS256', 'ES256', 'EdDSA']);

function refuse(reason: TokenVerificationErrorReason, message: string): TokenVerificationError {
  return new TokenVerificationError(reason, message);
}

function decodeJson(segment: string, part: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(base64urlText(segment));
  } catch {
    throw refuse(
      'token-invalid',
      `The token's ${part} is not base64url-encoded JSON. Pass the accessToken exactly as Gatehouse issued it.`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refuse('token-invalid', `The token's ${part} is not a JSON object. Pass the accessToken exactly as Gatehouse issued it.`);
  }
  return value as Record<string, unknown>;
}

interface Header {
  alg: TokenAlgorithm;
  kid: string | undefined;
  type: JwtTokenType;
}

/**
 * Checked headers by their encoded text. Every token of a key has the same header, so the hot path
 * skips decoding it; only headers that passed every check are remembered, and the map is bounded.
 */
const headers = new Map<string, Header>();
const MAX_CACHED_HEADERS = 1_000;

function parseHeader(segment: string): Header {
  const cached = headers.get(segment);
  if (cached) return cached;
  const header = decodeJson(segment, 'header');
  const { alg, typ, kid } = header;
  if (typeof alg !== 'string') throw refuse('token-invalid', 'The token header has no "alg". Pass a Gatehouse access token.');
  if (alg.toLowerCase() === 'none') {
    throw refuse('token-invalid', 'Unsigned tokens (alg "none") never verify. Pass the accessToken that Gatehouse issued.');
  }
  if (/^HS/i.test(alg)) {
    throw refuse('token-invalid', `HMAC tokens (alg "${alg}") never verify: Gatehouse signs with RS256, ES256 or EdDSA only.`);
  }
  if (!ACCEPTED_ALGORITHMS.has(alg)) {
    throw refuse('token-invalid', `The token's algorithm "${alg}" is not one Gatehouse signs with (RS256, ES256, EdDSA).`);
  }
  const type: JwtTokenType | undefined =
    typeof typ !== 'string' ? undefined : /^(application\/)?at\+jwt$/i.test(typ) ? 'session_token' : /^(application\/)?m2m\+jwt$/i.test(typ) ? 'm2m_token' : undefined;
  if (type === undefined) {
    throw refuse(
      'token-invalid',
      'The token header "typ" must be "at+jwt" (or "m2m+jwt" for a machine): only Gatehouse tokens are accepted (not ID tokens or other JWTs).',
    );
  }
  if (header.crit !== undefined) throw refuse('token-invalid', 'The token has "crit" header parameters, which Gatehouse never sets.');
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0 || kid.length > 256)) {
    throw refuse('token-invalid', 'The token header "kid" is malformed. Pass the accessToken exactly as Gatehouse issued it.');
  }
  const parsed: Header = { alg: alg as TokenAlgorithm, kid, type };
  if (headers.size >= MAX_CACHED_HEADERS) headers.clear();
  headers.set(segment, parsed);
  return parsed;
}

/** Imported `jwtKey`s, so networkless verification parses the PEM or JWK once. */
const textKeys = new Map<string, VerificationKey | Promise<VerificationKey>>();
const objectKeys = new WeakMap<object, VerificationKey | Promise<VerificationKey>>();

/** A promise of any realm (WebCrypto's may come from another one on Edge sandboxes). */
export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown }).then === 'function';
}

function unusable(error: unknown): TypeError {
  return new TypeError(`options.jwtKey is not a usable public key: ${(error as Error).message}`);
}

/** The imported jwtKey: at once on node:crypto, a promise (imported once) on WebCrypto. */
function importedJwtKey(jwtKey: string | JsonWebKey): VerificationKey | Promise<VerificationKey> {
  let key = typeof jwtKey === 'string' ? textKeys.get(jwtKey) : objectKeys.get(jwtKey);
  if (!key) {
    try {
      key = importJwtKey(jwtKey as string | Jwk);
    } catch (error) {
      throw unusable(error);
    }
    if (isPromise(key)) {
      key = key.catch((error: unknown) => {
        // A failed import is not remembered: the same mistake is reported again, not cached forever.
        if (typeof jwtKey === 'string') textKeys.delete(jwtKey);
        else objectKeys.delete(jwtKey);
        throw unusable(error);
      });
    }
    if (typeof jwtKey === 'string') textKeys.set(jwtKey, key);
    else objectKeys.set(jwtKey, key);
  }
  return key;
}

function networklessKey(jwtKey: string | JsonWebKey, kid: string | undefined): VerificationKey | Promise<VerificationKey> {
  const imported = importedJwtKey(jwtKey);
  return isPromise(imported) ? imported.then((key) => matchingKid(key, kid)) : matchingKid(imported, kid);
}

function matchingKid(key: VerificationKey, kid: string | undefined): VerificationKey {
  if (key.kid !== undefined && kid !== undefined && key.kid !== kid) {
    throw refuse(
      'jwk-kid-mismatch',
      `The token was signed with key "${kid}", but jwtKey is key "${key.kid}". The environment's signing key has rotated: update jwtKey, or leave it out to read the JWKS.`,
    );
  }
  return key;
}

function checkOptions(options: VerifyTokenOptions): void {
  if (typeof options?.issuer !== 'string' || options.issuer === '') {
    throw new TypeError('verifyToken needs options.issuer: {baseUrl}/v1/environments/{environmentId}.');
  }
  const skew = options.clockSkewInMs;
  if (skew !== undefined && !(Number.isFinite(skew) && skew >= 0)) {
    throw new TypeError('options.clockSkewInMs must be a number of milliseconds, 0 or more.');
  }
  // A string here would make the azp check a substring match ("https://app.example" in "https://app.example.test").
  const accepts = options.acceptsToken;
  if (accepts !== undefined && !(Array.isArray(accepts) && accepts.length > 0 && accepts.every((t) => t === 'session_token' || t === 'm2m_token'))) {
    throw new TypeError(
      'options.acceptsToken must list "session_token" and/or "m2m_token" (API keys are verified with verifyApiKey, or by authenticateRequest).',
    );
  }
  const parties = options.authorizedParties;
  if (parties !== undefined && !(Array.isArray(parties) && parties.every((p) => typeof p === 'string'))) {
    throw new TypeError("options.authorizedParties must be an array of origins, e.g. ['https://app.example.com'], not a single string.");
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/**
 * Verifies a Gatehouse access token offline and returns its claims. Throws
 * `TokenVerificationError {reason, message}` for every refusal; a JWKS that cannot be read is
 * `jwks-unavailable`, never a crash.
 */
export function verifyToken(token: string, options: VerifyTokenOptions & { acceptsToken?: readonly ['session_token'] | undefined }): Promise<GatehouseClaims>;
export function verifyToken(token: string, options: VerifyTokenOptions): Promise<GatehouseClaims | MachineClaims>;
export function verifyToken(token: string, options: VerifyTokenOptions): Promise<GatehouseClaims | MachineClaims> {
  return verifyTypedToken(token, options).then(claimsOf);
}

const claimsOf = (verified: Verified) => verified.claims;

type Verified = { type: 'session_token'; claims: GatehouseClaims } | { type: 'm2m_token'; claims: MachineClaims };

/** verifyToken, saying which kind of token it verified. */
export function verifyTypedToken(token: string, options: VerifyTokenOptions): Promise<Verified> {
  try {
    return Promise.resolve(verifyNow(token, options));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The whole verification, synchronous up to the first thing that must wait (a JWKS fetch, a
 * WebCrypto verify): with a cached key on node:crypto, no promise is made at all.
 */
function verifyNow(token: string, options: VerifyTokenOptions): Verified | Promise<Verified> {
  checkOptions(options);
  // Three non-empty parts. Their characters need no pass of their own: the signing input is verified
  // as UTF-8 bytes of the exact text (any odd character changes them), and the signature must be
  // canonical base64url.
  const firstDot = typeof token === 'string' ? token.indexOf('.') : -1;
  const lastDot = firstDot > 0 ? token.lastIndexOf('.') : -1;
  if (
    firstDot <= 0 ||
    lastDot <= firstDot + 1 ||
    lastDot === token.length - 1 ||
    token.indexOf('.', firstDot + 1) !== lastDot ||
    token.length > MAX_TOKEN_LENGTH
  ) {
    throw refuse(
      'token-invalid',
      'The token is not a compact JWT (three base64url parts separated by dots). Pass the accessToken as Gatehouse issued it.',
    );
  }
  const header = parseHeader(token.slice(0, firstDot));
  if (!(options.acceptsToken ?? ['session_token']).includes(header.type)) {
    throw refuse(
      'token-type-not-accepted',
      header.type === 'm2m_token'
        ? 'This is a machine token (typ "m2m+jwt"), which acts for no user. Where machines may call, pass acceptsToken: ["m2m_token"].'
        : 'This is a session token (typ "at+jwt"), and only machine tokens are accepted here.',
    );
  }
  const claims = decodeJson(token.slice(firstDot + 1, lastDot), 'payload');

  // The issuer is checked before any key is looked up, so a token of another environment never
  // causes a fetch.
  if (claims.iss !== options.issuer) {
    throw refuse(
      'issuer-invalid',
      `The token's issuer is ${JSON.stringify(claims.iss)}, not ${options.issuer}. Check the issuer option: it names the environment the token must come from.`,
    );
  }
  const signed: SignedToken = { token, lastDot, header, claims, options };
  const key = keyFor(header, options);
  return isPromise(key) ? key.then((found) => checkSignature(found, signed)) : checkSignature(key, signed);
}

interface SignedToken {
  token: string;
  lastDot: number;
  header: Header;
  claims: Record<string, unknown>;
  options: VerifyTokenOptions;
}

function keyFor(header: Header, options: VerifyTokenOptions): VerificationKey | Promise<VerificationKey> {
  if (options.jwtKey !== undefined) return networklessKey(options.jwtKey, header.kid);
  if (header.kid === undefined) throw refuse('token-invalid', 'The token header has no "kid", so no published key can verify it.');
  const cache = options.jwksUrl === undefined ? jwksCacheForIssuer(options.issuer) : jwksCacheFor(options.jwksUrl);
  return cache.cached(header.kid) ?? cache.key(header.kid, options.jwksTimeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS);
}

function checkSignature(key: VerificationKey, signed: SignedToken): Verified | Promise<Verified> {
  const { token, lastDot, header } = signed;
  if (header.alg !== key.alg) {
    throw refuse('token-invalid', `The token says "alg": "${header.alg}", but its key verifies ${key.alg} only.`);
  }
  const encodedSignature = token.slice(lastDot + 1);
  // Only the canonical encoding: the same signature spelled another way is another token.
  const valid =
    isCanonicalBase64url(encodedSignature) &&
    verifySignature(key, utf8Bytes(token.slice(0, lastDot)), fromBase64url(encodedSignature));
  // Not `instanceof Promise`: WebCrypto's promise may come from another realm (Edge sandboxes).
  return typeof valid === 'boolean' ? checkClaims(valid, signed) : valid.then((result) => checkClaims(result, signed));
}

/** Only `true` verifies (a promise object, say, is truthy). */
function checkClaims(valid: unknown, { header, claims, options }: SignedToken): Verified {
  if (valid !== true) {
    throw refuse(
      'signature-invalid',
      'The token signature is invalid: the token was altered, or signed by another key than the issuer publishes.',
    );
  }
  const { sub, sid, jti, exp, nbf, iat, azp, scope } = claims;
  if (header.type === 'm2m_token') {
    if (typeof sub !== 'string' || typeof jti !== 'string' || typeof scope !== 'string') {
      throw refuse('token-invalid', 'The token lacks "sub", "jti" or "scope": it is not a Gatehouse machine token.');
    }
  } else if (typeof sub !== 'string' || typeof sid !== 'string' || typeof jti !== 'string') {
    throw refuse('token-invalid', 'The token lacks "sub", "sid" or "jti": it is not a Gatehouse access token.');
  }
  if (typeof exp !== 'number' || typeof nbf !== 'number' || typeof iat !== 'number') {
    throw refuse('token-invalid', 'The token lacks numeric "exp", "nbf" and "iat" claims: it is not a Gatehouse access token.');
  }
  const now = Date.now();
  const skew = options.clockSkewInMs ?? DEFAULT_CLOCK_SKEW_MS;
  if (now >= exp * 1000 + skew) {
    throw refuse(
      'token-expired',
      `The token expired ${seconds(now - exp * 1000)} ago. The client gets a new one by refreshing its session (@gatehouse/js does it ahead of expiry).`,
    );
  }
  if (nbf * 1000 - skew > now || iat * 1000 - skew > now) {
    throw refuse(
      'token-not-active-yet',
      `The token is not valid for another ${seconds(Math.max(nbf, iat) * 1000 - now)}. Check this machine's clock, or raise clockSkewInMs.`,
    );
  }
  if (azp !== undefined && typeof azp !== 'string') throw refuse('token-invalid', 'The token\'s "azp" claim is not a string.');
  if (options.authorizedParties && azp !== undefined && !options.authorizedParties.includes(azp)) {
    throw refuse(
      'authorized-party-invalid',
      `The token was issued to a page on ${azp}, which is not in authorizedParties. Add that origin to authorizedParties if it is yours.`,
    );
  }
  return header.type === 'm2m_token' ? { type: 'm2m_token', claims: claims as MachineClaims } : { type: 'session_token', claims: claims as GatehouseClaims };
}
