import type { IncomingMessage } from 'node:http';
import { verifyApiKey, type VerifiedApiKey } from './api-keys.js';
import type { ActorClaim, GatehouseClaims, MachineClaims } from './claims.js';
import {
  ApiKeyVerificationError,
  TokenVerificationError,
  type ApiKeyVerificationErrorReason,
  type TokenVerificationErrorReason,
} from './errors.js';
import { verifyTypedToken, type JwtTokenType, type VerifyTokenOptions } from './verify-token.js';

/** The credentials a request may carry: a user's session token, an API key (`gh_ak_…`), a machine's token. */
export type TokenType = JwtTokenType | 'api_key';

/** Session tokens only (the default): what the framework adapters take. */
export type AuthenticateRequestOptions = Omit<VerifyTokenOptions, 'acceptsToken'>;

/** Several kinds of credential; `api_key` needs the environment's secret key (and the server's URL). */
export interface AuthenticateAnyRequestOptions extends AuthenticateRequestOptions {
  acceptsToken: readonly TokenType[];
  /** For `api_key`: the environment's `sk_…`. */
  secretKey?: string;
  /** For `api_key`: the server root; by default taken from `issuer`. */
  baseUrl?: string;
  /** For `api_key`: see verifyApiKey's `cacheTtlMs`. */
  apiKeyCacheTtlMs?: number;
}

/** A refusal's reason: a token's, or `token-missing` when the request carried no bearer token. */
export type AuthReason = TokenVerificationErrorReason | ApiKeyVerificationErrorReason | 'token-missing';

/** Clerk's reverification presets: a factor verified within 10 minutes (`strict`, `strict_mfa`), an hour (`moderate`) or a day (`lax`). */
export type ReverificationPreset = 'strict_mfa' | 'strict' | 'moderate' | 'lax';
export type ReverificationLevel = 'first_factor' | 'second_factor' | 'multi_factor';
export type ReverificationConfig = ReverificationPreset | { level: ReverificationLevel; afterMinutes: number };

/**
 * What `has()` may ask: a permission or a role of the organization the token acts as, and/or a
 * recent verification (Clerk's `reverification`), read from the token's `fva`.
 */
export type HasCheck =
  | { permission: string; role?: never; reverification?: ReverificationConfig }
  | { role: string; permission?: never; reverification?: ReverificationConfig }
  | { reverification: ReverificationConfig; permission?: never; role?: never };

export interface SignedInAuth {
  isSignedIn: true;
  isAuthenticated: true;
  tokenType: 'session_token';
  userId: string;
  sessionId: string;
  orgId: string | null;
  orgRole: string | null;
  orgSlug: string | null;
  orgPermissions: string[];
  /** Who acts, when the session is impersonated (the `act` claim); null otherwise. */
  actor: ActorClaim | null;
  /** Minutes since the session verified a first and a second factor (`fva`); null when the token has none. */
  factorVerificationAge: [number, number] | null;
  claims: GatehouseClaims;
  /**
   * Reads the token's claims, a snapshot taken when it was issued: for what a UI shows and coarse
   * gates in your own API. Gatehouse's own organization changes check the live membership instead.
   */
  has(check: HasCheck): boolean;
}

export interface SignedOutAuth {
  isSignedIn: false;
  isAuthenticated: false;
  /** The kind of the refused credential, when it could be told; null when there was none. */
  tokenType: TokenType | null;
  reason: AuthReason;
  message: string;
}

export type RequestAuth = SignedInAuth | SignedOutAuth;

/** A request made with an API key: no user is signed in, the key acts for its subject. */
export interface ApiKeyAuth {
  isSignedIn: false;
  isAuthenticated: true;
  tokenType: 'api_key';
  /** `ak_…` */
  keyId: string;
  /** `user_…` or `org_…` */
  subject: string;
  userId: string | null;
  orgId: string | null;
  scopes: string[];
  expiresAt: number | null;
  hasScope(scope: string): boolean;
}

/** A request made with a machine's token (client credentials). */
export interface MachineAuth {
  isSignedIn: false;
  isAuthenticated: true;
  tokenType: 'm2m_token';
  /** `mch_…` */
  machineId: string;
  scopes: string[];
  claims: MachineClaims;
  hasScope(scope: string): boolean;
}

/** What authenticateRequest answers with `acceptsToken`: branch on `isAuthenticated`, then `tokenType`. */
export type AnyRequestAuth = SignedInAuth | ApiKeyAuth | MachineAuth | SignedOutAuth;

/** A fetch `Request` (Next.js, Hono, Workers) or node's `IncomingMessage` (Express, Fastify's `raw`). */
export type AuthenticatableRequest = Request | IncomingMessage | { headers: Headers | IncomingMessage['headers'] };

function authorizationOf(request: AuthenticatableRequest): string | undefined {
  const headers = request.headers as Headers | IncomingMessage['headers'];
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get('authorization') ?? undefined;
  const value = (headers as IncomingMessage['headers']).authorization;
  return typeof value === 'string' ? value : undefined;
}

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i;

/** The bearer token of a request, or undefined. */
export function bearerToken(request: AuthenticatableRequest): string | undefined {
  const header = authorizationOf(request);
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

export function signedInAuth(claims: GatehouseClaims): SignedInAuth {
  const orgId = typeof claims.org_id === 'string' ? claims.org_id : null;
  const orgRole = orgId && typeof claims.org_role === 'string' ? claims.org_role : null;
  const orgSlug = orgId && typeof claims.org_slug === 'string' ? claims.org_slug : null;
  const orgPermissions =
    orgId && Array.isArray(claims.org_permissions) ? claims.org_permissions.filter((p): p is string => typeof p === 'string') : [];
  const actor = typeof claims.act === 'object' && claims.act !== null && typeof claims.act.sub === 'string' ? { sub: claims.act.sub } : null;
  const fva = factorVerificationAgeOf(claims.fva);
  const orgCheck = (check: HasCheck): boolean | null => {
    if (typeof check?.permission === 'string') return orgId !== null && orgPermissions.includes(check.permission);
    if (typeof check?.role === 'string') return orgId !== null && orgRole === check.role;
    return null;
  };
  return {
    isSignedIn: true,
    isAuthenticated: true,
    tokenType: 'session_token',
    userId: claims.sub,
    sessionId: claims.sid,
    orgId,
    orgRole,
    orgSlug,
    orgPermissions,
    actor,
    factorVerificationAge: fva,
    claims,
    has(check) {
      const org = orgCheck(check);
      if (check?.reverification === undefined) return org === true;
      // An impersonated session never counts as recently verified: the actor proved nothing of the user's.
      const recent = actor === null && reverified(check.reverification, fva);
      return org === null ? recent : org && recent;
    },
  };
}

/** Clerk's presets (`@clerk/shared` authorization): minutes and the factor level they ask. */
const REVERIFICATION_PRESETS: Record<ReverificationPreset, { level: ReverificationLevel; afterMinutes: number }> = {
  strict_mfa: { level: 'multi_factor', afterMinutes: 10 },
  strict: { level: 'second_factor', afterMinutes: 10 },
  moderate: { level: 'second_factor', afterMinutes: 60 },
  lax: { level: 'second_factor', afterMinutes: 1_440 },
};

function factorVerificationAgeOf(value: unknown): [number, number] | null {
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [first, second] = value as unknown[];
  return Number.isInteger(first) && Number.isInteger(second) ? [first as number, second as number] : null;
}

/**
 * Whether the token's `fva` shows a verification within the window, as Clerk reads it: a factor
 * counts when verified fewer than `afterMinutes` ago; `second_factor` falls back to the first factor
 * for a user without one, and `multi_factor` asks both when the user has a second factor. A malformed
 * config or a token without `fva` is never recent.
 */
function reverified(config: ReverificationConfig, fva: [number, number] | null): boolean {
  const rule = typeof config === 'string' ? REVERIFICATION_PRESETS[config] : config;
  if (!rule || !fva || !Number.isFinite(rule.afterMinutes) || rule.afterMinutes <= 0) return false;
  const [first, second] = fva;
  const firstOk = first !== -1 && first < rule.afterMinutes;
  const secondOk = second !== -1 && second < rule.afterMinutes;
  switch (rule.level) {
    case 'first_factor':
      return firstOk;
    case 'second_factor':
      return second === -1 ? firstOk : secondOk;
    case 'multi_factor':
      return second === -1 ? firstOk : firstOk && secondOk;
    default:
      return false;
  }
}

function apiKeyAuth(key: VerifiedApiKey): ApiKeyAuth {
  return {
    isSignedIn: false,
    isAuthenticated: true,
    tokenType: 'api_key',
    keyId: key.id,
    subject: key.subject,
    userId: key.subject.startsWith('user_') ? key.subject : null,
    orgId: key.subject.startsWith('org_') ? key.subject : null,
    scopes: key.scopes,
    expiresAt: key.expiresAt,
    hasScope: (scope) => key.scopes.includes(scope),
  };
}

function machineAuth(claims: MachineClaims): MachineAuth {
  const scopes = claims.scope.split(' ').filter((s) => s !== '');
  return {
    isSignedIn: false,
    isAuthenticated: true,
    tokenType: 'm2m_token',
    machineId: claims.sub,
    scopes,
    claims,
    hasScope: (scope) => scopes.includes(scope),
  };
}

function signedOut(reason: AuthReason, message: string, tokenType: TokenType | null): SignedOutAuth {
  return { isSignedIn: false, isAuthenticated: false, tokenType, reason, message };
}

const TOKEN_TYPES: ReadonlySet<string> = new Set<TokenType>(['session_token', 'api_key', 'm2m_token']);

function checkAccepts(options: { acceptsToken?: readonly TokenType[] | undefined }): readonly TokenType[] {
  const accepts = options.acceptsToken ?? ['session_token'];
  if (!Array.isArray(accepts) || accepts.length === 0 || !accepts.every((t) => TOKEN_TYPES.has(t))) {
    throw new TypeError('options.acceptsToken must list some of "session_token", "api_key" and "m2m_token".');
  }
  return accepts;
}

/**
 * Reads `Authorization: Bearer <credential>` and verifies it. Never throws for a bad or missing
 * credential: the answer says whether the request is authenticated, as what (`tokenType`), and if
 * not, why. By default only session tokens (`at+jwt`) are accepted; `acceptsToken` adds API keys
 * (asked of Gatehouse, see verifyApiKey) and machine tokens (`m2m+jwt`, verified offline).
 */
export function authenticateRequest(
  request: AuthenticatableRequest,
  options: AuthenticateRequestOptions & { acceptsToken?: undefined },
): Promise<RequestAuth>;
export function authenticateRequest(request: AuthenticatableRequest, options: AuthenticateAnyRequestOptions): Promise<AnyRequestAuth>;
export async function authenticateRequest(
  request: AuthenticatableRequest,
  options: AuthenticateRequestOptions & {
    [K in keyof Omit<AuthenticateAnyRequestOptions, 'issuer'>]?: AuthenticateAnyRequestOptions[K] | undefined;
  },
): Promise<AnyRequestAuth> {
  const accepts = checkAccepts(options);
  const token = bearerToken(request);
  if (token === undefined) {
    return signedOut(
      'token-missing',
      'The request has no "Authorization: Bearer <access token>" header. Send the token from getToken() in that header.',
      null,
    );
  }
  try {
    if (token.startsWith('gh_ak_')) {
      if (!accepts.includes('api_key')) {
        return signedOut(
          'token-type-not-accepted',
          'API keys are not accepted here. Where they are, pass acceptsToken: ["api_key", …].',
          'api_key',
        );
      }
      if (options.secretKey === undefined) throw new TypeError("Accepting API keys needs options.secretKey: the environment's sk_… key.");
      const baseUrl = options.baseUrl ?? options.issuer.replace(/\/v1\/environments\/[^/]+$/, '');
      const key = await verifyApiKey(token, {
        secretKey: options.secretKey,
        baseUrl,
        ...(options.apiKeyCacheTtlMs !== undefined ? { cacheTtlMs: options.apiKeyCacheTtlMs } : {}),
      });
      return apiKeyAuth(key);
    }
    const jwtTypes = accepts.filter((t): t is JwtTokenType => t !== 'api_key');
    if (jwtTypes.length === 0) {
      return signedOut(
        'token-type-not-accepted',
        'Only API keys are accepted here: send "Authorization: Bearer gh_ak_…".',
        typeOfRefused(token),
      );
    }
    const verified = await verifyTypedToken(token, { ...options, acceptsToken: jwtTypes });
    return verified.type === 'm2m_token' ? machineAuth(verified.claims) : signedInAuth(verified.claims);
  } catch (error) {
    if (error instanceof TokenVerificationError || error instanceof ApiKeyVerificationError)
      return signedOut(error.reason, error.message, typeOfRefused(token));
    throw error;
  }
}

/** The kind of a refused credential, from its shape. */
function typeOfRefused(token: string): TokenType | null {
  if (token.startsWith('gh_ak_')) return 'api_key';
  try {
    const typ = JSON.parse(atob(token.split('.')[0]!.replace(/-/g, '+').replace(/_/g, '/'))).typ;
    if (typeof typ === 'string' && /m2m\+jwt$/i.test(typ)) return 'm2m_token';
    if (typeof typ === 'string' && /at\+jwt$/i.test(typ)) return 'session_token';
  } catch {
    // not a JWT
  }
  return null;
}
