import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { REFRESH_TIMEOUT_MS } from '../../src/client.js';
import { LEASE_MS } from '../../src/coordination.js';
import { createGatehouse, GatehouseError, type Gatehouse, type StorageAdapter } from '../../src/index.js';
import { refreshMargin } from '../../src/session.js';
import { memoryAdapter } from '../../src/storage.js';
import { fakeGatehouse } from './fake-server.js';

const clients: Gatehouse[] = [];
function client(server: ReturnType<typeof fakeGatehouse>, storage: StorageAdapter | 'memory' = 'memory') {
  const gh = createGatehouse({
    publishableKey: 'pk_test_x',
    baseUrl: 'http://gatehouse.test/',
    storage,
    fetch: server.fetch as typeof fetch,
  });
  clients.push(gh);
  return gh;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  for (const gh of clients.splice(0)) gh.destroy();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('refresh margin', () => {
  it('is min(30 s, a third of the lifetime)', () => {
    expect(refreshMargin(30_000)).toBe(10_000);
    expect(refreshMargin(90_000)).toBe(30_000);
    expect(refreshMargin(3_600_000)).toBe(30_000);
  });
});

describe('state machine', () => {
  it('reports loading apart from signed out, then signed in after a sign-in', async () => {
    const server = fakeGatehouse();
    const gh = client(server);
    expect(gh.state).toMatchObject({ isLoaded: false, isSignedIn: undefined, user: null });
    const seen: (boolean | undefined)[] = [];
    const unsubscribe = gh.subscribe((s) => seen.push(s.isSignedIn));
    await gh.load();
    expect(gh.state).toMatchObject({ isLoaded: true, isSignedIn: false, session: null });
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    expect(gh.state).toMatchObject({ isLoaded: true, isSignedIn: true, session: { id: 'sess_1', userId: 'user_1' } });
    expect(gh.state.user?.email).toBe('a@example.test');
    expect(seen).toContain(false);
    expect(seen.at(-1)).toBe(true);
    unsubscribe();
    const count = seen.length;
    await gh.signOut();
    expect(seen.length).toBe(count);
    expect(gh.state).toMatchObject({ isLoaded: true, isSignedIn: false, user: null });
    expect(await gh.getToken()).toBeNull();
  });

  it('load() with a stored session that is due refreshes it before reporting signed in', async () => {
    const server = fakeGatehouse(30);
    const shared = memoryAdapter();
    const first = client(server, shared);
    await first.load();
    await first.signIn.password({ email: 'a@example.test', password: 'pw' });
    first.destroy();
    await vi.advanceTimersByTimeAsync(25_000); // stored token now has 5 s left: due
    const second = client(server, shared);
    const states: boolean[] = [];
    second.subscribe((s) => states.push(s.isLoaded));
    await second.load();
    expect(server.refreshCalls()).toHaveLength(1);
    expect(second.state.isSignedIn).toBe(true);
    expect(second.state.session?.expiresAt).toBe(Date.now() + 30_000);
  });
});

describe('timers', () => {
  it('refreshes a 30 s token 10 s before expiry, once per lifetime, not on a fixed interval', async () => {
    const server = fakeGatehouse(30);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    await vi.advanceTimersByTimeAsync(19_900);
    expect(server.refreshCalls()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(server.refreshCalls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(server.refreshCalls()).toHaveLength(2);
    // The second refresh spent the first one's successor, never a captured token.
    expect(server.refreshCalls().map((c) => c.body.refreshToken)).toEqual(['rt_1', 'rt_2']);
  });

  it('getToken() serves a fresh token without a request, and one refresh serves concurrent callers', async () => {
    const server = fakeGatehouse(300);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    const token = await gh.getToken();
    expect(await gh.getToken()).toBe(token);
    expect(server.refreshCalls()).toHaveLength(0);
    const tokens = await Promise.all([1, 2, 3, 4, 5].map(() => gh.getToken({ forceRefresh: true })));
    expect(server.refreshCalls()).toHaveLength(1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(token);
  });

  it('a 429 keeps the session, reports degraded, and waits Retry-After before trying again', async () => {
    const server = fakeGatehouse(30);
    let answers = 0;
    server.script.refresh = () => (answers++ === 0 ? { status: 429, code: 'rate_limited', retryAfter: 7 } : 'ok');
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    const before = await gh.getToken();
    await vi.advanceTimersByTimeAsync(20_100);
    expect(server.refreshCalls()).toHaveLength(1);
    expect(gh.state.isSignedIn).toBe(true);
    expect(gh.state.degraded).toMatchObject({ reason: 'rate_limited' });
    expect(gh.state.degraded?.error.retryAfter).toBe(7);
    expect(await gh.getToken()).toBe(before); // still valid: served, no request while backing off
    await vi.advanceTimersByTimeAsync(6_500);
    expect(server.refreshCalls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(server.refreshCalls()).toHaveLength(2);
    expect(gh.state.degraded).toBeNull();
    expect(await gh.getToken()).not.toBe(before);
  });

  it('a forced refresh refused with 429 is retried after Retry-After although the refused token is not yet due', async () => {
    const server = fakeGatehouse(300);
    let answers = 0;
    server.script.refresh = () => (answers++ === 0 ? { status: 429, code: 'rate_limited', retryAfter: 2 } : 'ok');
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    const refused = await gh.getToken();
    await expect(gh.getToken({ forceRefresh: true })).rejects.toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 2 });
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'rate_limited' } });
    await vi.advanceTimersByTimeAsync(2_500);
    expect(server.refreshCalls()).toHaveLength(2);
    expect(gh.state.degraded).toBeNull();
    expect(await gh.getToken()).not.toBe(refused);
  });

  it('network failures back off exponentially and never sign out, even past expiry', async () => {
    const server = fakeGatehouse(30);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    server.script.refresh = () => 'network';
    await vi.advanceTimersByTimeAsync(20_100);
    expect(server.refreshCalls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60_000);
    const attempts = server.refreshCalls().length;
    // 1, 2, 4, 8, 16, 30 s (±20 %) apart: a handful in a minute, not one per tick.
    expect(attempts).toBeGreaterThanOrEqual(4);
    expect(attempts).toBeLessThanOrEqual(8);
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'network' } });
    await expect(gh.getToken()).rejects.toMatchObject({ code: 'unavailable', status: 0 });
    expect(gh.state.isSignedIn).toBe(true);
    server.script.refresh = () => 'ok';
    // The next attempt is at most the longest back-off away: 30 s + 20 % jitter.
    await vi.advanceTimersByTimeAsync(36_100);
    expect(gh.state.degraded).toBeNull();
    expect(typeof (await gh.getToken())).toBe('string');
  });

  it.each(['session_revoked', 'unauthenticated'])('%s from a refresh signs out', async (code) => {
    const server = fakeGatehouse(30);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    server.script.refresh = () => ({ status: 401, code });
    await vi.advanceTimersByTimeAsync(20_100);
    expect(gh.state).toMatchObject({ isLoaded: true, isSignedIn: false, session: null, user: null });
    expect(await gh.getToken()).toBeNull();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(server.refreshCalls()).toHaveLength(1);
  });

  it("a 401 for a refresh that is not Gatehouse's answer (a proxy's page, no error body) degrades but never signs out", async () => {
    const server = fakeGatehouse(30);
    const proxied = (async (input: RequestInfo | URL, init?: RequestInit) =>
      new URL(String(input)).pathname === '/v1/auth/refresh'
        ? new Response('<html>401 Authorization Required</html>', { status: 401, headers: { 'content-type': 'text/html' } })
        : server.fetch(input, init)) as typeof fetch;
    const gh = createGatehouse({ publishableKey: 'pk_test_x', baseUrl: 'http://gatehouse.test/', storage: 'memory', fetch: proxied });
    clients.push(gh);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    await expect(gh.getToken({ forceRefresh: true })).rejects.toMatchObject({ status: 401, code: 'internal' });
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'error' } });
  });

  it('other refusals of a refresh (403, 500) degrade but never sign out', async () => {
    const server = fakeGatehouse(30);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    server.script.refresh = () => ({ status: 403, code: 'origin_not_allowed' });
    await vi.advanceTimersByTimeAsync(20_100);
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'error' } });
    const error = gh.state.degraded?.error;
    expect(error).toBeInstanceOf(GatehouseError);
    expect(error).toMatchObject({ status: 403, code: 'origin_not_allowed' });
  });
});

describe('backing off', () => {
  it('a 429 Retry-After holds past expiry: getToken() sends nothing until it has passed', async () => {
    const server = fakeGatehouse(30);
    let answers = 0;
    server.script.refresh = () => (answers++ === 0 ? { status: 429, code: 'rate_limited', retryAfter: 30 } : 'ok');
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    await vi.advanceTimersByTimeAsync(20_100); // due: the refresh is refused, retry in 30 s
    expect(server.refreshCalls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(15_000); // the access token has now expired
    expect(gh.state.session!.expiresAt).toBeLessThan(Date.now());
    for (let i = 0; i < 5; i++) {
      await expect(gh.getToken()).rejects.toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 30 });
    }
    expect(server.refreshCalls()).toHaveLength(1);
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'rate_limited' } });
    await vi.advanceTimersByTimeAsync(15_500); // 30 s (+ up to 250 ms) after the refusal
    expect(server.refreshCalls()).toHaveLength(2);
    expect(gh.state.degraded).toBeNull();
    expect(typeof (await gh.getToken())).toBe('string');
  });

  /** A browser-ish global scope, so the client listens for `online`. */
  function browserEvents(): EventTarget {
    const target = new EventTarget();
    vi.stubGlobal('addEventListener', target.addEventListener.bind(target));
    vi.stubGlobal('removeEventListener', target.removeEventListener.bind(target));
    vi.stubGlobal('document', { visibilityState: 'visible', addEventListener: () => undefined, removeEventListener: () => undefined });
    return target;
  }

  it('coming back online does not cut a 429 Retry-After short', async () => {
    const events = browserEvents();
    const server = fakeGatehouse(30);
    server.script.refresh = () => ({ status: 429, code: 'rate_limited', retryAfter: 30 });
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    await vi.advanceTimersByTimeAsync(20_100);
    expect(server.refreshCalls()).toHaveLength(1);
    events.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(server.refreshCalls()).toHaveLength(1);
  });

  it('coming back online retries a network back-off at once', async () => {
    const events = browserEvents();
    const server = fakeGatehouse(30);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    server.script.refresh = () => 'network';
    await vi.advanceTimersByTimeAsync(20_100);
    await vi.advanceTimersByTimeAsync(5_000); // a few attempts: the back-off is now past 1 s
    const attempts = server.refreshCalls().length;
    server.script.refresh = () => 'ok';
    events.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(0);
    expect(server.refreshCalls()).toHaveLength(attempts + 1);
    expect(gh.state.degraded).toBeNull();
  });
});

describe('the refresh lock', () => {
  /** AbortSignal.timeout on the faked clock (Node's own runs on real timers). */
  function fakeAbortTimeouts(): void {
    vi.spyOn(AbortSignal, 'timeout').mockImplementation((ms) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), ms);
      return controller.signal;
    });
  }

  it('a refresh that gets no answer times out before the lock lease lapses: degraded, still signed in', async () => {
    expect(REFRESH_TIMEOUT_MS).toBeLessThan(LEASE_MS);
    fakeAbortTimeouts();
    const server = fakeGatehouse(300);
    const gh = client(server);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    server.script.refresh = () => 'hang';
    let outcome: unknown = 'pending';
    void gh.getToken({ forceRefresh: true }).then(
      (token) => (outcome = token),
      (error: unknown) => (outcome = error),
    );
    await vi.advanceTimersByTimeAsync(REFRESH_TIMEOUT_MS);
    expect(outcome).toBeInstanceOf(GatehouseError);
    expect(outcome).toMatchObject({ status: 0, code: 'unavailable' });
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'network' } });
  });

  it('signOut() signs out and tells the other tabs at once, even while a refresh holds the lock', async () => {
    const posted: unknown[] = [];
    vi.spyOn(BroadcastChannel.prototype, 'postMessage').mockImplementation((message) => void posted.push(message));
    const server = fakeGatehouse(300);
    const shared = memoryAdapter(); // an adapter: shared between tabs, so sign-outs are broadcast
    const gh = client(server, shared);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    let answer!: () => void;
    server.script.refresh = () => new Promise<void>((resolve) => (answer = resolve));
    const refreshing = gh.getToken({ forceRefresh: true });
    await vi.advanceTimersByTimeAsync(0);
    expect(server.refreshCalls()).toHaveLength(1); // in flight, under the lock
    posted.length = 0;
    const signingOut = gh.signOut();
    await vi.advanceTimersByTimeAsync(0);
    expect(gh.state).toMatchObject({ isLoaded: true, isSignedIn: false, session: null });
    expect(await gh.getToken()).toBeNull();
    expect(posted).toContainEqual(expect.objectContaining({ type: 'signed-out' }));
    // The refresh finishes: its tokens do not sign this tab back in, and the revoke spends the newest.
    answer();
    expect(await refreshing).toBeNull();
    await signingOut;
    expect(gh.state.isSignedIn).toBe(false);
    expect(await shared.get('gatehouse:pk_test_x')).toBeNull();
    const signout = server.calls.filter((c) => c.path === '/v1/auth/signout');
    expect(signout.map((c) => c.body.refreshToken)).toEqual(['rt_2']);
  });
});
