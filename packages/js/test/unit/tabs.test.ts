import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGatehouse, type Gatehouse, type StorageAdapter } from '../../src/index.js';
import { memoryAdapter } from '../../src/storage.js';
import { fakeGatehouse } from './fake-server.js';

/** Tabs of one origin in one process: a shared Web Lock, and a BroadcastChannel delivered on deliver(). */
function tabsOfOneOrigin() {
  const queue: (() => void)[] = [];
  const open = new Set<{ name: string; onmessage: ((e: { data: unknown }) => void) | null }>();
  vi.stubGlobal(
    'BroadcastChannel',
    class {
      onmessage: ((e: { data: unknown }) => void) | null = null;
      constructor(readonly name: string) {
        open.add(this);
      }
      postMessage(data: unknown) {
        for (const other of open) if (other !== this && other.name === this.name) queue.push(() => other.onmessage?.({ data }));
      }
      close() {
        open.delete(this);
      }
    },
  );
  const tails = new Map<string, Promise<unknown>>();
  vi.stubGlobal('navigator', {
    locks: {
      request<T>(name: string, _options: unknown, callback: () => Promise<T>): Promise<T> {
        const run = (tails.get(name) ?? Promise.resolve()).then(callback, callback);
        tails.set(
          name,
          run.catch(() => undefined),
        );
        return run;
      },
    },
  });
  return {
    async deliver() {
      while (queue.length) {
        queue.shift()!();
        await vi.advanceTimersByTimeAsync(0);
      }
    },
    /** Messages posted but not yet delivered are lost. */
    lose() {
      queue.length = 0;
    },
  };
}

const clients: Gatehouse[] = [];
function tab(server: ReturnType<typeof fakeGatehouse>, storage: StorageAdapter) {
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
});

describe('sign-out across tabs', () => {
  it('a sign-out in one tab signs the other out while that tab holds the lock for a refresh', async () => {
    const tabs = tabsOfOneOrigin();
    const server = fakeGatehouse(300);
    const shared = memoryAdapter();
    const a = tab(server, shared);
    const b = tab(server, shared);
    await Promise.all([a.load(), b.load()]);
    await a.signIn.password({ email: 'a@example.test', password: 'pw' });
    await tabs.deliver();
    expect(b.state.isSignedIn).toBe(true);
    let answer!: () => void;
    server.script.refresh = () => new Promise<void>((resolve) => (answer = resolve));
    const refreshing = b.getToken({ forceRefresh: true });
    await vi.advanceTimersByTimeAsync(0);
    expect(server.refreshCalls()).toHaveLength(1); // tab b holds the lock
    const signingOut = a.signOut();
    await tabs.deliver();
    expect(a.state.isSignedIn).toBe(false);
    expect(b.state.isSignedIn).toBe(false);
    answer();
    expect(await refreshing).toBeNull();
    await signingOut;
    await tabs.deliver();
    expect(a.state.isSignedIn).toBe(false);
    expect(b.state.isSignedIn).toBe(false);
    expect(await shared.get('gatehouse:pk_test_x')).toBeNull();
    expect(server.calls.filter((c) => c.path === '/v1/auth/signout').map((c) => c.body.refreshToken)).toEqual(['rt_2']);
  });

  it('a refresh announced while the sign-out waits: the signing-out tab ignores it, the other tab is signed out again once the store is empty', async () => {
    const tabs = tabsOfOneOrigin();
    // The store empties only when the test says: the sign-out holds the lock meanwhile.
    const inner = memoryAdapter();
    let emptied!: () => void;
    const emptying = new Promise<void>((resolve) => (emptied = resolve));
    const shared: StorageAdapter = { get: inner.get, set: inner.set, remove: async (k) => (await emptying, inner.remove(k)) };
    const server = fakeGatehouse(300);
    const a = tab(server, shared);
    const b = tab(server, shared);
    await Promise.all([a.load(), b.load()]);
    await a.signIn.password({ email: 'a@example.test', password: 'pw' });
    await tabs.deliver();
    let answer!: () => void;
    server.script.refresh = () => new Promise<void>((resolve) => (answer = resolve));
    const refreshing = b.getToken({ forceRefresh: true });
    await vi.advanceTimersByTimeAsync(0);
    const signingOut = a.signOut();
    tabs.lose(); // a's first "signed-out" is lost on the way to b
    answer();
    expect(typeof (await refreshing)).toBe('string'); // b did not hear of the sign-out: it adopts rt_2
    await vi.advanceTimersByTimeAsync(0);
    expect(b.state.isSignedIn).toBe(true);
    await tabs.deliver(); // b's "session" reaches a while a's sign-out waits on the store
    expect(a.state.isSignedIn).toBe(false);
    emptied();
    await signingOut;
    await tabs.deliver();
    expect(a.state.isSignedIn).toBe(false);
    expect(b.state.isSignedIn).toBe(false);
    expect(server.calls.filter((c) => c.path === '/v1/auth/signout').map((c) => c.body.refreshToken)).toEqual(['rt_2']);
  });
});

describe('backing off across tabs', () => {
  it('a 429 Retry-After told to one tab holds every tab: the others send nothing until it has passed', async () => {
    const tabs = tabsOfOneOrigin();
    const server = fakeGatehouse(30);
    const shared = memoryAdapter();
    const a = tab(server, shared);
    const b = tab(server, shared);
    const c = tab(server, shared);
    await Promise.all([a.load(), b.load(), c.load()]);
    await a.signIn.password({ email: 'a@example.test', password: 'pw' });
    await tabs.deliver();
    server.script.refresh = () => ({ status: 429, code: 'rate_limited', retryAfter: 60 });
    // Every tab's timer comes due at once (same token, same schedule): one asks, all wait.
    await vi.advanceTimersByTimeAsync(20_100);
    await tabs.deliver();
    expect(server.refreshCalls()).toHaveLength(1);
    for (const gh of [a, b, c]) expect(gh.state).toMatchObject({ isSignedIn: true, degraded: { reason: 'rate_limited' } });
    await expect(b.getToken({ forceRefresh: true })).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(server.refreshCalls()).toHaveLength(1);
    server.script.refresh = () => 'ok';
    await vi.advanceTimersByTimeAsync(31_000);
    await tabs.deliver();
    expect(server.refreshCalls()).toHaveLength(2);
    for (const gh of [a, b, c]) expect(gh.state).toMatchObject({ isSignedIn: true, degraded: null });
    expect(new Set(await Promise.all([a, b, c].map((gh) => gh.getToken()))).size).toBe(1);
  });
});
