import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGatehouse, type Gatehouse } from '../../src/index.js';
import { fakeGatehouse } from './fake-server.js';

/** What the client picks and does in each runtime: Node, a page, a page whose storage is broken. */
const clients: Gatehouse[] = [];
function client(server: ReturnType<typeof fakeGatehouse>) {
  const gh = createGatehouse({ publishableKey: 'pk_test_x', baseUrl: 'http://gatehouse.test/', fetch: server.fetch as typeof fetch });
  clients.push(gh);
  return gh;
}

/** A Storage that records writes. */
function fakeLocalStorage() {
  const values = new Map<string, string>();
  const writes: string[] = [];
  return {
    writes,
    storage: {
      getItem: (k: string) => values.get(k) ?? null,
      setItem: (k: string, v: string) => void (writes.push(k), values.set(k, v)),
      removeItem: (k: string) => void values.delete(k),
    },
  };
}

/** A page: window, a document whose visibility the test sets, and window events. */
function page() {
  const events = new EventTarget();
  const doc = Object.assign(new EventTarget(), { visibilityState: 'visible' as DocumentVisibilityState });
  vi.stubGlobal('window', globalThis);
  vi.stubGlobal('document', doc);
  vi.stubGlobal('addEventListener', events.addEventListener.bind(events));
  vi.stubGlobal('removeEventListener', events.removeEventListener.bind(events));
  return { events, doc };
}

/**
 * Waits for `promise` while the faked clock runs: without Web Locks the client takes a
 * localStorage lease, whose waits are timers.
 */
async function settle<T>(promise: Promise<T>): Promise<T> {
  let done = false;
  const watched = promise.finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await vi.advanceTimersByTimeAsync(25);
  return watched;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  for (const gh of clients.splice(0)) gh.destroy();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('default storage', () => {
  it('is memory in Node even where a localStorage global exists (Node 22+ web storage)', async () => {
    const local = fakeLocalStorage();
    vi.stubGlobal('localStorage', local.storage);
    const gh = client(fakeGatehouse());
    await settle(gh.load());
    await settle(gh.signIn.password({ email: 'a@example.test', password: 'pw' }));
    expect(gh.state.isSignedIn).toBe(true);
    expect(local.writes).toEqual([]);
  });

  it('is localStorage in a page without IndexedDB, shared with the next client of the origin', async () => {
    page();
    const local = fakeLocalStorage();
    vi.stubGlobal('localStorage', local.storage);
    const server = fakeGatehouse();
    const first = client(server);
    await settle(first.load());
    await settle(first.signIn.password({ email: 'a@example.test', password: 'pw' }));
    expect(local.writes).toContain('gatehouse:pk_test_x');
    const second = client(server); // a reload, or another tab
    await settle(second.load());
    expect(second.state).toMatchObject({ isSignedIn: true, session: { id: 'sess_1' } });
  });

  it('a page whose IndexedDB will not open still loads, signs in and keeps the session in localStorage', async () => {
    page();
    const local = fakeLocalStorage();
    vi.stubGlobal('localStorage', local.storage);
    vi.stubGlobal('indexedDB', {
      open() {
        const request: { error: Error; onerror?: () => void } = { error: new Error('The operation is insecure.') };
        queueMicrotask(() => request.onerror?.());
        return request;
      },
    });
    const server = fakeGatehouse();
    const gh = client(server);
    await expect(settle(gh.load())).resolves.toMatchObject({ isLoaded: true, isSignedIn: false });
    await settle(gh.signIn.password({ email: 'a@example.test', password: 'pw' }));
    expect(gh.state.isSignedIn).toBe(true);
    expect(local.writes).toContain('gatehouse:pk_test_x');
  });
});

describe('waking up', () => {
  /** The machine slept: the clock jumps past the refresh time without any timer firing. */
  function sleepPast(ms: number) {
    vi.setSystemTime(Date.now() + ms);
  }

  /** A page's client on localStorage, signed in with a 300 s token. */
  async function signedInTab() {
    vi.stubGlobal('localStorage', fakeLocalStorage().storage);
    const server = fakeGatehouse(300);
    const gh = client(server);
    await settle(gh.load());
    await settle(gh.signIn.password({ email: 'a@example.test', password: 'pw' }));
    return { server, gh };
  }

  it('focus with a stale token refreshes at once; focus with a fresh one sends nothing', async () => {
    const { events } = page();
    const { server } = await signedInTab();
    events.dispatchEvent(new Event('focus'));
    await vi.advanceTimersByTimeAsync(500);
    expect(server.refreshCalls()).toHaveLength(0);
    sleepPast(280_000);
    events.dispatchEvent(new Event('focus'));
    await vi.advanceTimersByTimeAsync(500);
    expect(server.refreshCalls()).toHaveLength(1);
  });

  it('becoming visible with a stale token refreshes at once; becoming hidden does not', async () => {
    const { doc } = page();
    const { server, gh } = await signedInTab();
    sleepPast(280_000);
    doc.visibilityState = 'hidden';
    doc.dispatchEvent(new Event('visibilitychange'));
    await vi.advanceTimersByTimeAsync(500);
    expect(server.refreshCalls()).toHaveLength(0);
    doc.visibilityState = 'visible';
    doc.dispatchEvent(new Event('visibilitychange'));
    await vi.advanceTimersByTimeAsync(500);
    expect(server.refreshCalls()).toHaveLength(1);
    expect(gh.state).toMatchObject({ isSignedIn: true, degraded: null });
  });

  it('coming back online with a stale token refreshes at once', async () => {
    const { events } = page();
    const { server } = await signedInTab();
    sleepPast(280_000);
    events.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(500);
    expect(server.refreshCalls()).toHaveLength(1);
  });
});
