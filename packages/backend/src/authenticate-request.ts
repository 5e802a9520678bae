import type { IncomingMessage } from 'node:http';
import type { GatehouseClaims } from './claims.js';
import { TokenVerificationError, type TokenVerificationErrorReason } from './errors.js';
import { verifyToken, type VerifyTokenOptions } from './verify-token.js';

export type AuthenticateRequestOptions = VerifyTokenOptions;

/** A refusal's reason: a token's, or `token-missing` when the request carried no bearer token. */
export type AuthReason = TokenVerificationErrorReason | 'token-missing';

/** What `has()` may ask: a permission or a role of the organization the token acts as. */
export type HasCheck = { permission: string; role?: never } | { role: string; permission?: never };

export interface SignedInAuth {
  isSignedIn: true;
  userId: string;
  sessionId: string;
  orgId: string | null;
  orgRole: string | null;
  orgSlug: string | null;
  orgPermissions: string[];
  claims: GatehouseClaims;
  /**
   * Reads the token's claims, a snapshot taken when it was issued: for what a UI shows and coarse
   * gates in your own API. Gatehouse's own organization changes check the live membership instead.
   */
  has(check: HasCheck): boolean;
}

export interface SignedOutAuth {
  isSignedIn: false;
  reason: AuthReason;
  message: string;
}

export type RequestAuth = SignedInAuth | SignedOutAuth;

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
  return {
    isSignedIn: true,
    userId: claims.sub,
    sessionId: claims.sid,
    orgId,
    orgRole,
    orgSlug,
    orgPermissions,
    claims,
    has(check) {
      if (orgId === null) return false;
      if (typeof check?.permission === 'string') return orgPermissions.includes(check.permission);
      if (typeof check?.role === 'string') return orgRole === check.role;
      return false;
    },
  };
}

/**
 * Reads `Authorization: Bearer <token>` and verifies it with verifyToken's options. Never throws for
 * a bad or missing token: the answer says whether the request is signed in, and if not, why.
 */
export async function authenticateRequest(request: AuthenticatableRequest, options: AuthenticateRequestOptions): Promise<RequestAuth> {
  const token = bearerToken(request);
  if (token === undefined) {
    return {
      isSignedIn: false,
      reason: 'token-missing',
      message: 'The request has no "Authorization: Bearer <access token>" header. Send the token from getToken() in that header.',
    };
  }
  try {
    return signedInAuth(await verifyToken(token, options));
  } catch (error) {
    if (error instanceof TokenVerificationError) return { isSignedIn: false, reason: error.reason, message: error.message };
    throw error;
  }
}
