import { claimedEnvironmentId, type EnvironmentId } from '../lib/ids.js';
import { sign, verify, type KeyObject } from 'node:crypto';
import { randomText } from '../lib/crypto.js';
import { ApiError } from '../lib/errors.js';
import type { Environment, TokenAlgorithm } from '../tenancy/settings.js';
import { CLOCK_SKEW_MS } from './key-schedule.js';
import { KID_PATTERN, type SigningKey, type SigningKeys } from './signing-keys.js';
import type { SignatureThread } from './signature-thread.js';

/**
 * Access tokens: compact JWS signed with node:crypto directly and cached KeyObjects (no JOSE
 * library on the hot path). Header `{alg, kid, typ: "at+jwt"}`; claims as docs/identity.md lists them.
 */

export const ACCESS_TOKEN_TYPE = 'at+jwt';
/** A machine's token (client credentials): refused wherever a session's token is expected. */
export const MACHINE_TOKEN_TYPE = 'm2m+jwt';
const MAX_TOKEN_LENGTH = 8192;
const ENVIRONMENT_ID = /^env_[0-9a-z]{26}$/;
const SEGMENT = /^[A-Za-z0-9_-]*$/;

export interface AccessTokenClaims {
  iss: string;
  sub: string;
  sid: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  azp?: string;
  [claim: string]: unknown;
}

export interface IssueInput {
  userId: string;
  sessionId: string;
  /** The request's Origin, when it had one; becomes `azp`. */
  origin: string | undefined;
  /** Further claims (the Organizations feature adds org_* here). Never overrides registered ones. */
  extraClaims?: Record<string, unknown>;
  /** The session's factors and minutes since it verified a first and a second factor (sessions/factors.ts). */
  amr?: string[];
  fva?: [number, number];
  /** Who acts, in an impersonated session (RFC 8693 §4.1). */
  act?: { sub: string };
  /** When the session must end (epoch ms): `exp` is never later. */
  notAfter?: number | undefined;
}

export interface VerifiedToken {
  environmentId: EnvironmentId;
  /** The signing key's id, checked again when a cached verification is reused (revocation). */
  kid: string;
  claims: AccessTokenClaims;
}

export function signInput(alg: TokenAlgorithm, data: Buffer, key: KeyObject): Buffer {
  switch (alg) {
    case 'RS256':
      return sign('sha256', data, key);
    case 'ES256':
      return sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
    case 'EdDSA':
      return sign(null, data, key);
  }
}

export function verifyInput(alg: TokenAlgorithm, data: Buffer, key: KeyObject, signature: Buffer): boolean {
  switch (alg) {
    case 'RS256':
      return verify('sha256', data, key, signature);
    case 'ES256':
      return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'EdDSA':
      return verify(null, data, key, signature);
  }
}

/** Signature lengths per algorithm (RSA 2048: 256 bytes), checked before verifying. */
function signatureLengthOk(alg: TokenAlgorithm, key: KeyObject, length: number): boolean {
  if (alg === 'ES256') return length === 64;
  if (alg === 'EdDSA') return length === 64;
  return length === (key.asymmetricKeyDetails?.modulusLength ?? 2048) / 8;
}

function refuse(message: string): ApiError {
  return new ApiError('unauthenticated', message);
}

function decodeJson(segment: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw refuse(`The access token's ${what} is not base64url-encoded JSON. Send the accessToken exactly as sign-in returned it.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refuse(`The access token's ${what} is not a JSON object. Send the accessToken exactly as sign-in returned it.`);
  }
  return value as Record<string, unknown>;
}

function newTokenId(): string {
  return randomText(16);
}

const REGISTERED = new Set(['iss', 'sub', 'sid', 'iat', 'nbf', 'exp', 'jti', 'azp', 'amr', 'fva', 'act']);

/** How many verified tokens a node remembers (signature and shape checks skipped on a repeat). */
const VERIFIED_CACHE_MAX = 10_000;

export class AccessTokens {
  private readonly issuerPrefix: string;
  /**
   * Tokens whose signature and shape already verified. A signature check is a pure function of the
   * token and the (immutable) public key, so a repeat only re-checks time and, in the caller, the
   * session. Insertion-ordered, evicting the oldest.
   */
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(
    private readonly keys: SigningKeys,
    baseUrl: string,
    private readonly now: () => number,
    /** 0 turns the verified-token cache off (the benchmark measures the full check that way). */
    private readonly cacheSize = VERIFIED_CACHE_MAX,
    /** Signs RS256 tokens off the event loop; without it every token is signed inline. */
    private readonly signatureThread?: SignatureThread,
  ) {
    this.issuerPrefix = `${baseUrl}/v1/environments/`;
  }

  issuer(environmentId: string): string {
    return `${this.issuerPrefix}${environmentId}`;
  }

  async issue(environment: Environment, input: IssueInput): Promise<{ token: string; expiresIn: number }> {
    const key = await this.keys.signingKey(environment);
    const iat = Math.floor(this.now() / 1000);
    const ttl = environment.settings.accessTokenTtlSeconds;
    const expiresIn = input.notAfter === undefined ? ttl : Math.max(0, Math.min(ttl, Math.floor(input.notAfter / 1000) - iat));
    const claims: AccessTokenClaims = {
      ...Object.fromEntries(Object.entries(input.extraClaims ?? {}).filter(([name]) => !REGISTERED.has(name))),
      iss: this.issuer(environment.id),
      sub: input.userId,
      sid: input.sessionId,
      iat,
      nbf: iat,
      exp: iat + expiresIn,
      jti: newTokenId(),
      ...(input.origin !== undefined ? { azp: input.origin } : {}),
      ...(input.amr !== undefined ? { amr: input.amr } : {}),
      ...(input.fva !== undefined ? { fva: input.fva } : {}),
      ...(input.act !== undefined ? { act: { sub: input.act.sub } } : {}),
    };
    const signingInput = `${key.encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return { token: `${signingInput}.${await this.signature(key, signingInput)}`, expiresIn };
  }

  /** The base64url signature of `input`. */
  private async signature(key: SigningKey, input: string): Promise<string> {
    const inline = () => signInput(key.alg, Buffer.from(input), key.privateKey).toString('base64url');
    if (key.alg !== 'RS256' || !this.signatureThread) return inline();
    try {
      return await this.signatureThread.signRs256(input, key.privateKey);
    } catch {
      // The thread failed (it restarts on the next signature): this token is signed here.
      return inline();
    }
  }

  /**
   * Checks everything a token carries: shape, `typ`, `iss` (which names the environment), `kid`
   * (format, then membership of that environment), `alg` pinned to that key's algorithm, the
   * signature, and `exp`/`nbf` within 5 s of skew. Whether the session is still live is the
   * caller's check. Throws 401 unauthenticated.
   */
  async verify(token: string): Promise<VerifiedToken> {
    let known = this.verified.get(token);
    // A token verified before its key was revoked is checked again (and refused).
    if (known && !this.keys.holdsVerificationKey(known.environmentId, known.kid)) {
      this.verified.delete(token);
      known = undefined;
    }
    const verified = known ?? (await this.verifySignatureAndShape(token));
    this.checkTime(verified.claims);
    if (!known && this.cacheSize > 0) {
      if (this.verified.size >= this.cacheSize) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, verified);
    }
    return verified;
  }

  private async verifySignatureAndShape(token: string): Promise<VerifiedToken> {
    if (token.length > MAX_TOKEN_LENGTH) throw refuse('The access token is too long to be one this service issued.');
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) {
      throw refuse('The access token is not a compact JWT (three base64url segments separated by dots).');
    }
    const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
    const header = decodeJson(encodedHeader, 'header');
    const alg = header.alg;
    if (typeof alg !== 'string' || alg.toLowerCase() === 'none') {
      throw refuse('Unsigned access tokens (alg "none") are refused. Use the accessToken that sign-in or refresh returned.');
    }
    // A machine's token (machines/tokens.ts) is signed by the same keys: only `typ` tells it apart.
    if (header.typ === MACHINE_TOKEN_TYPE || header.typ === `application/${MACHINE_TOKEN_TYPE}`) {
      throw refuse('This is a machine token (typ "m2m+jwt"), which acts for no user: send a session access token (typ "at+jwt").');
    }
    if (header.typ !== ACCESS_TOKEN_TYPE && header.typ !== `application/${ACCESS_TOKEN_TYPE}`) {
      throw refuse(`The token's header "typ" must be "${ACCESS_TOKEN_TYPE}"; only Gatehouse access tokens are accepted here.`);
    }
    if (header.crit !== undefined) throw refuse('The token carries "crit" header parameters, which this service does not support.');
    const kid = header.kid;
    if (typeof kid !== 'string' || !KID_PATTERN.test(kid)) {
      throw refuse('The token\'s header "kid" is missing or malformed; Gatehouse key ids look like key_ followed by 26 characters.');
    }

    const claims = decodeJson(encodedPayload, 'payload');
    const iss = claims.iss;
    const environmentId = claimedEnvironmentId(
      typeof iss === 'string' && iss.startsWith(this.issuerPrefix) ? iss.slice(this.issuerPrefix.length) : '',
    );
    if (!ENVIRONMENT_ID.test(environmentId) || iss !== this.issuer(environmentId)) {
      throw refuse(`The token's issuer is not this service: "iss" must be ${this.issuerPrefix}{environmentId}.`);
    }

    const key = await this.keys.verificationKey(environmentId, kid);
    if (key === 'revoked') {
      throw refuse(`The signing key "${kid}" of this token was revoked. Refresh the session for a token signed by the current key.`);
    }
    if (!key) {
      throw refuse(`Unknown signing key "${kid}" for environment ${environmentId}. The token was not issued by this environment.`);
    }
    if (alg !== key.alg) {
      throw refuse(`The token's algorithm "${alg}" does not match its signing key, which uses ${key.alg}.`);
    }
    const signature = Buffer.from(encodedSignature, 'base64url');
    if (
      signature.length === 0 ||
      !signatureLengthOk(key.alg, key.publicKey, signature.length) ||
      !verifyInput(key.alg, Buffer.from(`${encodedHeader}.${encodedPayload}`), key.publicKey, signature)
    ) {
      throw refuse('The access token signature is invalid. The token was altered or not issued by this environment.');
    }

    const { exp, nbf, iat, sub, sid, jti } = claims;
    if (typeof exp !== 'number' || typeof nbf !== 'number' || typeof iat !== 'number') {
      throw refuse('The access token lacks numeric "exp", "nbf" and "iat" claims.');
    }
    if (typeof sub !== 'string' || typeof sid !== 'string' || typeof jti !== 'string') {
      throw refuse('The access token lacks "sub", "sid" or "jti".');
    }
    return { environmentId, kid, claims: claims as AccessTokenClaims };
  }

  private checkTime({ exp, nbf }: AccessTokenClaims): void {
    const now = this.now();
    if (exp * 1000 + CLOCK_SKEW_MS <= now) {
      throw refuse('The access token has expired. Get a new one from POST /v1/auth/refresh with the refresh token.');
    }
    if (nbf * 1000 - CLOCK_SKEW_MS > now) {
      throw refuse('The access token is not valid yet ("nbf" is in the future). Check the clock of the machine that made it.');
    }
  }
}
