import type { SessionTokens } from './types.js';
import type { StoredSession } from './storage.js';

/** What the state shows of the session, read from the access token's claims. */
export interface SessionInfo {
  id: string;
  userId: string;
  /** When the current access token expires (ms since the epoch, local clock). */
  expiresAt: number;
  organizationId: string | null;
  organizationRole: string | null;
  organizationPermissions: string[];
  /** Who acts, while the session is impersonated (the token's `act` claim); null otherwise. */
  actor: { sub: string } | null;
  claims: Record<string, unknown>;
}

export function decodeClaims(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  try {
    const base64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Stores an answer's tokens with an expiry on the local clock, so clock skew cannot matter. */
export function toStored(tokens: SessionTokens, now: number): StoredSession {
  const claims = decodeClaims(tokens.accessToken);
  return {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: now + tokens.expiresIn * 1000,
    lifetime: tokens.expiresIn * 1000,
    sessionId: String(claims.sid ?? ''),
    userId: String(claims.sub ?? ''),
  };
}

function actorOf(act: unknown): { sub: string } | null {
  if (typeof act !== 'object' || act === null) return null;
  const sub = (act as { sub?: unknown }).sub;
  return typeof sub === 'string' ? { sub } : null;
}

export function sessionInfo(stored: StoredSession): SessionInfo {
  const claims = decodeClaims(stored.accessToken);
  return {
    id: stored.sessionId,
    userId: stored.userId,
    expiresAt: stored.expiresAt,
    organizationId: typeof claims.org_id === 'string' ? claims.org_id : null,
    organizationRole: typeof claims.org_role === 'string' ? claims.org_role : null,
    organizationPermissions: Array.isArray(claims.org_permissions) ? (claims.org_permissions as string[]) : [],
    actor: actorOf(claims.act),
    claims,
  };
}

/**
 * How long before expiry a token counts as due: min(30 s, a third of its lifetime), so a short-lived
 * token is not refreshed on every call and a long one is not refreshed needlessly early.
 */
export function refreshMargin(lifetime: number): number {
  return Math.min(30_000, lifetime / 3);
}

export function isFresh(stored: StoredSession, now: number): boolean {
  return stored.expiresAt - now > refreshMargin(stored.lifetime);
}

/** Delay before retrying a failed refresh: Retry-After when given, else exponential from 1 s to 30 s with jitter. */
export function backoffDelay(attempt: number, retryAfterSeconds: number | undefined, random = Math.random): number {
  if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000 + random() * 250;
  const base = Math.min(30_000, 1000 * 2 ** attempt);
  return base * (0.8 + random() * 0.4);
}
