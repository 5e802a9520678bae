import { cookieMirror } from './cookie.js';
import { createChannel, createLock, LEASE_MS, type TabMessage } from './coordination.js';
import { endsSession, GatehouseError } from './errors.js';
import { createFlows, type Flows } from './flows.js';
import { callWith, createSend, tokenGuard, type RouteRequest, type SessionCall } from './http.js';
import { backoffDelay, isFresh, refreshMargin, sessionInfo, toStored } from './session.js';
import { sessionStore, type StoredSession } from './storage.js';
import type { Core, Degraded, GatehouseOptions, GatehouseState, Listener } from './core.js';
import type { SessionTokens } from './types.js';
import type { SwitchOrganizationBody } from '@gatehouse/contract';

/**
 * A request that spends the refresh token runs under the cross-tab lock; it gives up (a network
 * failure: degraded, retried) well before the localStorage lease lapses and another tab takes over.
 */
export const REFRESH_TIMEOUT_MS = 8_000;
if (REFRESH_TIMEOUT_MS >= LEASE_MS) throw new Error('REFRESH_TIMEOUT_MS must be shorter than the lock lease');

const SIGNED_OUT: Omit<GatehouseState, 'isLoaded'> = {
  isSignedIn: false,
  user: null,
  session: null,
  organization: null,
  organizations: [],
  degraded: null,
};

export type Gatehouse = Flows & {
  readonly state: GatehouseState;
  load(): Promise<GatehouseState>;
  subscribe(listener: Listener): () => void;
  getToken(options?: { forceRefresh?: boolean }): Promise<string | null>;
  /** fetch for your own backend: adds the bearer token; on a 401 refreshes once and retries once. */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  /** Stops timers and cross-tab listeners (tests, hot reload). */
  destroy(): void;
};

export function createGatehouse(options: GatehouseOptions): Gatehouse {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const key = `gatehouse:${options.publishableKey}`;
  const store = sessionStore(options.storage, key);
  const tabId = Math.random().toString(36).slice(2);
  const lock = createLock(key, store.shared, tabId);
  const channel = store.shared ? createChannel(key, onTabMessage) : { post: () => undefined, close: () => undefined };
  const listeners = new Set<Listener>();
  const cleanups: (() => void)[] = [() => channel.close()];
  const send = createSend(base, doFetch);
  /** A call with the publishable key. */
  const call = callWith(send, options.publishableKey);
  /** A call that spends the refresh token: under the lock, so bounded by REFRESH_TIMEOUT_MS. */
  const spend = callWith(send, options.publishableKey, REFRESH_TIMEOUT_MS);
  const cookie = cookieMirror(options.sessionCookie, (token) => callWith(send, token)('GET /v1/me/sessions'));

  let state: GatehouseState = { ...SIGNED_OUT, isLoaded: false, isSignedIn: undefined };
  let current: StoredSession | null = null;
  let loading: Promise<GatehouseState> | undefined;
  let inflight: Promise<StoredSession | null> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  let backoffUntil = 0;
  /** The refused access token a failed forced refresh was replacing: the retry must replace it too. */
  let retryRejected: string | undefined;
  /** A token a 401 made this client fetch: a 401 for it too is the backend's answer, not staleness. */
  let renewedAfter401: string | undefined;
  /** Bumped on every sign-out: a refresh or rotation begun before it must not sign this tab back in. */
  let signOuts = 0;
  /** signOut() calls waiting for the lock: other tabs' session announcements are stale meanwhile. */
  let signingOut = 0;

  function patchState(patch: Partial<GatehouseState>): GatehouseState {
    state = { ...state, ...patch };
    for (const listener of [...listeners]) listener(state);
    return state;
  }

  function schedule(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (!current) return;
    // After a failure the retry is due when the backoff ends, however fresh the token looks.
    const due = failures > 0 ? backoffUntil : current.expiresAt - refreshMargin(current.lifetime);
    timer = setTimeout(() => void refresh(failures > 0 ? retryRejected : undefined).catch(() => undefined), Math.max(0, due - Date.now()));
  }

  /** Makes `stored` this tab's session; a different session or organization reloads the profile. */
  function adopt(stored: StoredSession, reloadProfile = true): void {
    const previous = current;
    current = stored;
    cookie.write(stored);
    const info = sessionInfo(stored);
    const newSession = previous?.sessionId !== stored.sessionId;
    const changed = newSession || state.session?.organizationId !== info.organizationId;
    patchState({ ...(state.isLoaded ? { isSignedIn: true } : {}), session: info, ...(newSession ? { user: null } : {}) });
    schedule();
    if (changed && reloadProfile && state.isLoaded) void loadProfile().catch(() => undefined);
  }

  function becomeSignedOut(): GatehouseState {
    signOuts++;
    current = null;
    cookie.clear();
    recovered();
    schedule();
    return patchState({ isLoaded: true, ...SIGNED_OUT });
  }

  /**
   * The one place a refresh token is spent. Inside the cross-tab lock it reads the newest stored
   * session: if another tab already rotated it, this tab adopts the result and sends nothing.
   * `rejected` is an access token the server refused; a stored session still holding it is refreshed
   * even while fresh.
   */
  function refresh(rejected?: string): Promise<StoredSession | null> {
    const epoch = signOuts;
    return (inflight ??= lock(async () => {
      const stored = await store.read();
      if (epoch !== signOuts) return null; // signed out while this waited
      if (!stored) return current ? (becomeSignedOut(), null) : null;
      if (isFresh(stored, Date.now()) && stored.accessToken !== rejected) {
        if (failures > 0) recovered();
        if (stored.refreshToken !== current?.refreshToken) adopt(stored);
        return stored;
      }
      if (stored.retryAt !== undefined && stored.retryAt > Date.now()) {
        // Another tab was told to wait (429 Retry-After): every tab waits, rather than each asking once.
        const seconds = Math.ceil((stored.retryAt - Date.now()) / 1000);
        const error = new GatehouseError({
          status: 429,
          code: 'rate_limited',
          message: `Gatehouse asked this browser to slow down; the session is refreshed again in ${seconds} s.`,
          retryAfter: seconds,
        });
        return backOff(stored, rejected, error, 'rate_limited', stored.retryAt);
      }
      try {
        const { session } = await spend('POST /v1/auth/refresh', { body: { refreshToken: stored.refreshToken } });
        const next = toStored(session, Date.now());
        // Stored even after a sign-out meanwhile: the sign-out, next under the lock, revokes the newest token.
        await store.write(next);
        if (epoch !== signOuts) return null;
        recovered();
        adopt(next);
        channel.post({ type: 'session', from: tabId });
        return next;
      } catch (error) {
        if (epoch !== signOuts) return null;
        if (endsSession(error)) {
          await store.write(null);
          channel.post({ type: 'signed-out', from: tabId });
          becomeSignedOut();
          return null;
        }
        const failure = error as GatehouseError;
        const until = Date.now() + backoffDelay(failures, failure.retryAfter);
        const reason =
          failure.code === 'rate_limited' ? 'rate_limited' : failure.status === 0 || failure.status >= 500 ? 'network' : 'error';
        // The other tabs honour a Retry-After too (read under the lock above).
        if (reason === 'rate_limited') await store.write({ ...stored, retryAt: until }).catch(() => undefined);
        return backOff(stored, rejected, failure, reason, until);
      }
    }).finally(() => (inflight = undefined)));
  }

  /** Keeps the session, reports degraded, and schedules the retry for `until`. */
  function backOff(
    stored: StoredSession,
    rejected: string | undefined,
    error: GatehouseError,
    reason: Degraded['reason'],
    until: number,
  ): never {
    failures++;
    retryRejected = rejected;
    backoffUntil = until;
    if (!current) adopt(stored);
    patchState({ degraded: { reason, error, retryAt: until } });
    schedule();
    throw error;
  }

  function recovered(): void {
    failures = 0;
    backoffUntil = 0;
    retryRejected = undefined;
    if (state.degraded) patchState({ degraded: null });
  }

  async function getToken(opts: { forceRefresh?: boolean } = {}): Promise<string | null> {
    if (!state.isLoaded) await load();
    const held = current;
    if (!held) return null;
    const now = Date.now();
    if (!opts.forceRefresh && isFresh(held, now)) return held.accessToken;
    if (backoffUntil > now) {
      // Backing off (Retry-After or after failures): no request before the retry is due.
      if (!opts.forceRefresh && held.expiresAt > now) return held.accessToken;
      throw (
        state.degraded?.error ??
        new GatehouseError({ status: 0, code: 'unavailable', message: 'Gatehouse is being retried later. Try again shortly.' })
      );
    }
    try {
      return (await refresh(opts.forceRefresh ? held.accessToken : undefined))?.accessToken ?? null;
    } catch (error) {
      // A refresh that failed without ending the session still leaves a token that verifies.
      if (!opts.forceRefresh && current && current.expiresAt > Date.now()) return current.accessToken;
      throw error;
    }
  }

  const assertMayCarryToken = tokenGuard(base, options.backendOrigins);

  /** A 401 refreshes once; a 401 for the token that refresh produced is returned as it is. */
  async function renewAfter401(refused: string): Promise<string | null> {
    if (refused === renewedAfter401) return null;
    const renewed = await getToken({ forceRefresh: true }).catch(() => null);
    if (!renewed || renewed === refused) return null;
    renewedAfter401 = renewed;
    return renewed;
  }

  async function authFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
    assertMayCarryToken(input);
    const send = (token: string | null) => {
      const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
      if (token) headers.set('authorization', `Bearer ${token}`);
      return doFetch(input instanceof Request ? input.clone() : input, { ...init, headers });
    };
    const token = await getToken();
    const response = await send(token);
    if (response.status !== 401 || !token) return response;
    const renewed = await renewAfter401(token);
    return renewed ? send(renewed) : response;
  }

  /** A call with the user's access token: a 401 refreshes once and retries once. */
  const authed = (async (route: string, input?: RouteRequest) => {
    const token = await getToken();
    if (!token) throw new GatehouseError({ status: 401, code: 'unauthenticated', message: 'No one is signed in. Sign in first.' });
    try {
      return await send(route, input, token);
    } catch (error) {
      // invalid_credentials is about what was sent (a wrong password at reverify), not the token.
      if (!(error instanceof GatehouseError) || error.status !== 401 || error.code === 'invalid_credentials') throw error;
      const renewed = await renewAfter401(token);
      if (!renewed) throw error;
      return send(route, input, renewed);
    }
  }) as SessionCall;

  async function loadProfile(): Promise<GatehouseState> {
    const me = await authed('GET /v1/me');
    return patchState({ user: me.user, organizations: me.organizations, organization: me.organization });
  }

  /** A new session from a sign-in flow: stored inside the lock, announced to every tab. */
  async function establish(tokens: SessionTokens): Promise<GatehouseState> {
    const next = toStored(tokens, Date.now());
    const replaced = await lock(async () => {
      const previous = await store.read();
      await store.write(next);
      return previous;
    });
    if (replaced && replaced.sessionId !== next.sessionId)
      void call('POST /v1/auth/signout', { body: { refreshToken: replaced.refreshToken } }).catch(() => undefined);
    recovered();
    patchState({ isLoaded: true, isSignedIn: true });
    adopt(next, false);
    channel.post({ type: 'session', from: tabId });
    return loadProfile();
  }

  /**
   * Replaces the stored session, under the lock, with `make(stored)`: the switch-organization answer
   * (which spends the refresh token) or a reverified access token (which keeps it).
   */
  async function swap(make: (stored: StoredSession) => Promise<StoredSession>): Promise<void> {
    const epoch = signOuts;
    const signedOut = () => new GatehouseError({ status: 401, code: 'unauthenticated', message: 'No one is signed in. Sign in first.' });
    await lock(async () => {
      const stored = await store.read();
      if (!stored || epoch !== signOuts) throw signedOut();
      const next = await make(stored);
      await store.write(next);
      if (epoch !== signOuts) throw signedOut();
      adopt(next, false);
      channel.post({ type: 'session', from: tabId });
    });
  }

  async function rotate(body: Omit<SwitchOrganizationBody, 'refreshToken'>): Promise<GatehouseState> {
    await swap(async (stored) => {
      const { session } = await spend('POST /v1/auth/switch-organization', { body: { ...body, refreshToken: stored.refreshToken } });
      return toStored(session, Date.now());
    });
    return loadProfile();
  }

  /** A new access token of this session (reverification): the stored refresh token stays, whichever tab rotated it last. */
  async function replaceAccessToken(tokens: Omit<SessionTokens, 'refreshToken'>): Promise<GatehouseState> {
    await swap(async (stored) => toStored({ ...tokens, refreshToken: stored.refreshToken }, Date.now()));
    return state;
  }

  async function signOut(): Promise<GatehouseState> {
    // Signed out here and in every tab before waiting for the lock: a refresh holding it, or an
    // unreachable server, must not keep anyone signed in.
    becomeSignedOut();
    channel.post({ type: 'signed-out', from: tabId });
    signingOut++;
    let stored: StoredSession | null;
    try {
      stored = await lock(async () => {
        const previous = await store.read();
        await store.write(null);
        // Again once the store is empty: a tab may have adopted a refresh finished meanwhile.
        channel.post({ type: 'signed-out', from: tabId });
        return previous;
      });
    } finally {
      signingOut--;
    }
    if (stored) await call('POST /v1/auth/signout', { body: { refreshToken: stored.refreshToken } }).catch(() => undefined);
    return state;
  }

  function onTabMessage(message: TabMessage): void {
    if (message.from === tabId || !state.isLoaded) return;
    if (message.type === 'signed-out') {
      if (current) becomeSignedOut();
      return;
    }
    if (signingOut > 0) return;
    void store.read().then((stored) => {
      if (!stored) {
        if (current) becomeSignedOut();
      } else if (stored.refreshToken !== current?.refreshToken) {
        recovered();
        adopt(stored);
      }
    });
  }

  /** On focus or when the network returns: catch up with the store, refresh a stale token. */
  function wake(retryNow: boolean): void {
    if (!state.isLoaded || !current) return;
    // The network is back: a network back-off is moot, a Retry-After still stands.
    if (retryNow && state.degraded?.reason === 'network') backoffUntil = 0;
    if (backoffUntil > Date.now()) return;
    if (!isFresh(current, Date.now()) || retryNow) void refresh(failures > 0 ? retryRejected : undefined).catch(() => undefined);
    else
      void store
        .read()
        .then((stored) => (stored ? stored.refreshToken !== current?.refreshToken && adopt(stored) : current && becomeSignedOut()));
  }

  if (typeof addEventListener === 'function' && typeof document !== 'undefined') {
    const onVisible = () => document.visibilityState === 'visible' && wake(false);
    const onFocus = () => wake(false);
    const onOnline = () => wake(state.degraded?.reason === 'network');
    addEventListener('focus', onFocus);
    addEventListener('online', onOnline);
    document.addEventListener('visibilitychange', onVisible);
    cleanups.push(() => {
      removeEventListener('focus', onFocus);
      removeEventListener('online', onOnline);
      document.removeEventListener('visibilitychange', onVisible);
    });
  }

  function load(): Promise<GatehouseState> {
    return (loading ??= (async () => {
      const stored = await store.read();
      if (!stored) return becomeSignedOut();
      current = stored;
      cookie.write(stored);
      patchState({ session: sessionInfo(stored) });
      if (!isFresh(stored, Date.now())) await refresh().catch(() => undefined);
      if (!current) return state;
      patchState({ isLoaded: true, isSignedIn: true });
      schedule();
      await loadProfile().catch(() => undefined);
      return state;
    })());
  }

  const core: Core = { call, authed, fetch: doFetch, establish, rotate, replaceAccessToken, signOut, loadProfile, patchState, state: () => state };

  return {
    ...createFlows(core),
    get state() {
      return state;
    },
    load,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    getToken,
    fetch: authFetch,
    destroy() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      listeners.clear();
      for (const cleanup of cleanups.splice(0)) cleanup();
    },
  };
}
