import type { StoredSession } from './storage.js';

/** The first-party cookie a server (Next.js middleware, `auth()`) reads the access token from. */
export const SESSION_COOKIE = '__gh_session';

/** Until the session's own end is read: Gatehouse's default absolute session lifetime. */
const DEFAULT_MAX_AGE_SECONDS = 30 * 24 * 3600;

export interface CookieMirror {
  /** The cookie now holds this session's access token. */
  write(stored: StoredSession): void;
  clear(): void;
}

/** Reads the caller's live sessions (GET /v1/me/sessions) with the given access token. */
export type SessionsLookup = (accessToken: string) => Promise<{ data: { current: boolean; expiresAt: number }[] }>;

const OFF: CookieMirror = { write: () => undefined, clear: () => undefined };

/**
 * Cookie mode: the access token mirrored into `__gh_session` (never the refresh token, which stays
 * in storage only), so that server code sees who is signed in on a document request. The cookie
 * lives as long as the session may (its absolute end, read once per session), and always holds the
 * latest token: an expired one still tells the server to answer with its refresh page.
 */
export function cookieMirror(enabled: boolean | undefined, lookUp: SessionsLookup): CookieMirror {
  if (!enabled || typeof document === 'undefined') return OFF;
  const ends = new Map<string, number>();
  const asked = new Set<string>();
  let latest: StoredSession | null = null;
  const secure = typeof location !== 'undefined' && location.protocol === 'https:' ? '; Secure' : '';
  const set = (value: string, maxAge: number) => {
    document.cookie = `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; SameSite=Lax${secure}`;
  };

  function write(stored: StoredSession): void {
    latest = stored;
    const end = ends.get(stored.sessionId);
    set(stored.accessToken, end === undefined ? DEFAULT_MAX_AGE_SECONDS : Math.max(1, Math.floor((end - Date.now()) / 1000)));
    if (end !== undefined || asked.has(stored.sessionId) || stored.expiresAt <= Date.now()) return;
    asked.add(stored.sessionId);
    lookUp(stored.accessToken).then(
      ({ data }) => {
        const current = data.find((session) => session.current);
        if (!current) return;
        ends.set(stored.sessionId, current.expiresAt);
        if (latest?.sessionId === stored.sessionId) write(latest);
      },
      () => asked.delete(stored.sessionId),
    );
  }

  return {
    write,
    clear() {
      latest = null;
      set('', 0);
    },
  };
}
