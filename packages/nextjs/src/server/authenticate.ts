import { authFromClaims, TokenVerificationError, verifyToken, type GatehouseClaims, type HasCheck } from '@gatehouse/backend';
import { issuerOf, type ResolvedConfig } from './config.js';
import { crossSiteRefusal, type RequestFacts } from './request.js';

/** The access token cookie that @gatehouse/js writes in cookie mode. */
export const SESSION_COOKIE = '__gh_session';

export type SignedOutReason =
  | 'token-missing'
  | 'origin-invalid'
  | 'configuration-invalid'
  | 'token-invalid'
  | 'token-expired'
  | 'token-not-active-yet'
  | 'signature-invalid'
  | 'issuer-invalid'
  | 'authorized-party-invalid'
  | 'jwk-kid-mismatch'
  | 'jwks-unavailable'
  /** A machine's token (m2m+jwt) where a user's session is expected. */
  | 'token-type-not-accepted';

export interface SignedInAuthObject {
  isSignedIn: true;
  userId: string;
  sessionId: string;
  orgId: string | null;
  orgRole: string | null;
  orgSlug: string | null;
  orgPermissions: string[];
  sessionClaims: GatehouseClaims;
  /** Reads the token's organization claims (a snapshot): for UI and coarse gates. */
  has(check: HasCheck): boolean;
  /** The verified access token, to call your own APIs or Gatehouse's `/v1/me*` on the user's behalf. */
  getToken(): Promise<string>;
  /** Where the token came from: the `__gh_session` cookie or an `Authorization: Bearer` header. */
  tokenSource: 'cookie' | 'header';
}

export interface SignedOutAuthObject {
  isSignedIn: false;
  userId: null;
  sessionId: null;
  orgId: null;
  orgRole: null;
  orgSlug: null;
  orgPermissions: [];
  sessionClaims: null;
  has(check: HasCheck): false;
  getToken(): Promise<null>;
  /** Why: no token, a refused one (its verification reason), or a cross-site request carrying the cookie. */
  reason: SignedOutReason;
  message: string;
  tokenSource: 'cookie' | 'header' | null;
}

export type AuthObject = SignedInAuthObject | SignedOutAuthObject;

export function signedOut(reason: SignedOutReason, message: string, tokenSource: 'cookie' | 'header' | null = null): SignedOutAuthObject {
  return {
    isSignedIn: false,
    userId: null,
    sessionId: null,
    orgId: null,
    orgRole: null,
    orgSlug: null,
    orgPermissions: [],
    sessionClaims: null,
    has: () => false,
    getToken: async () => null,
    reason,
    message,
    tokenSource,
  };
}

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i;

/**
 * With only GATEHOUSE_JWT_KEY, nothing is fetched: the issuer is the token's own, if it is an
 * environment of this Gatehouse; the pinned key (each environment has its own) then proves it.
 */
function pinnedIssuer(token: string, config: ResolvedConfig): string | undefined {
  try {
    const payload = token.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (payload.length % 4)) % 4));
    const iss = (JSON.parse(json) as { iss?: unknown }).iss;
    const prefix = `${config.baseUrl}/v1/environments/`;
    return typeof iss === 'string' && config.baseUrl && iss.startsWith(prefix) && /^[A-Za-z0-9_]+$/.test(iss.slice(prefix.length))
      ? iss
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Who is signed in, from the request alone: the `Authorization: Bearer` header, else the
 * `__gh_session` cookie, verified offline every time (nothing a header claims is taken on trust).
 * A cookie that rides on a request from another site's page is not accepted (see request.ts).
 */
export async function authenticate(facts: RequestFacts, config: ResolvedConfig): Promise<AuthObject> {
  const header = facts.authorization ? BEARER.exec(facts.authorization)?.[1] : undefined;
  const token = header ?? facts.cookie ?? undefined;
  const source = header ? 'header' : token ? 'cookie' : null;
  if (!token) {
    return signedOut('token-missing', 'The request carries no session: no __gh_session cookie and no Authorization: Bearer header.');
  }
  if (source === 'cookie') {
    const refusal = crossSiteRefusal(facts, config.allowedOrigins);
    if (refusal) return signedOut('origin-invalid', refusal, source);
  }
  let issuer: string;
  try {
    issuer = config.issuer ?? (config.jwtKey ? pinnedIssuer(token, config) : undefined) ?? (await issuerOf(config));
  } catch (error) {
    return signedOut('configuration-invalid', (error as Error).message, source);
  }
  try {
    const claims = await verifyToken(token, {
      issuer,
      ...(config.jwtKey ? { jwtKey: config.jwtKey } : {}),
      ...(config.authorizedParties ? { authorizedParties: config.authorizedParties } : {}),
    });
    const auth = authFromClaims(claims);
    return {
      isSignedIn: true,
      userId: auth.userId,
      sessionId: auth.sessionId,
      orgId: auth.orgId,
      orgRole: auth.orgRole,
      orgSlug: auth.orgSlug,
      orgPermissions: auth.orgPermissions,
      sessionClaims: claims,
      has: auth.has,
      getToken: async () => token,
      tokenSource: source!,
    };
  } catch (error) {
    if (error instanceof TokenVerificationError) return signedOut(error.reason, error.message, source);
    if (error instanceof TypeError) return signedOut('configuration-invalid', error.message, source);
    throw error;
  }
}
