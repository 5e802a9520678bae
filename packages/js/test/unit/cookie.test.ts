import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGatehouse, SESSION_COOKIE, type Gatehouse, type StorageAdapter } from '../../src/index.js';
import { memoryAdapter } from '../../src/storage.js';
import { fakeGatehouse } from './fake-server.js';

/** A document whose cookie writes are recorded (the browser suite checks the real cookie jar). */
function stubDocument(protocol: 'https:' | 'http:') {
  const writes: string[] = [];
  vi.stubGlobal('document', {
    set cookie(value: string) {
      writes.push(value);
    },
    get cookie() {
      return '';
    },
  });
  vi.stubGlobal('location', { protocol, origin: `${protocol}//app.test` });
  return writes;
}

const clients: Gatehouse[] = [];
function client(server: ReturnType<typeof fakeGatehouse>, storage: StorageAdapter, sessionCookie = true) {
  const gh = createGatehouse({ publishableKey: 'pk_test_x', baseUrl: 'http://gatehouse.test/', storage, sessionCookie, fetch: server.fetch as typeof fetch });
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

const attributes = (write: string) => write.split('; ').slice(1);
const valueOf = (write: string) => write.split('; ')[0]!.slice(`${SESSION_COOKIE}=`.length);

describe('cookie mode (sessionCookie: true)', () => {
  it('mirrors the access token into __gh_session, with a Max-Age of the session’s absolute lifetime, never the refresh token', async () => {
    const writes = stubDocument('https:');
    const server = fakeGatehouse(30);
    const gh = client(server, memoryAdapter());
    await gh.load();
    expect(writes.map(attributes)).toEqual([['Path=/', 'Max-Age=0', 'SameSite=Lax', 'Secure']]); // no session: cleared
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    await vi.advanceTimersByTimeAsync(0);
    const token = await gh.getToken();
    const last = writes.at(-1)!;
    expect(valueOf(last)).toBe(token);
    expect(attributes(last)).toEqual(['Path=/', `Max-Age=${30 * 24 * 3600}`, 'SameSite=Lax', 'Secure']);
    expect(server.calls.filter((c) => c.path === '/v1/me/sessions')).toHaveLength(1);
    expect(writes.some((w) => w.includes('rt_'))).toBe(false);

    // A refresh rewrites it with the new token; the session's end is not asked again.
    await vi.advanceTimersByTimeAsync(21_000);
    expect(server.refreshCalls()).toHaveLength(1);
    const renewed = await gh.getToken();
    expect(renewed).not.toBe(token);
    expect(valueOf(writes.at(-1)!)).toBe(renewed);
    expect(Number(attributes(writes.at(-1)!)[1]!.slice('Max-Age='.length))).toBeLessThanOrEqual(30 * 24 * 3600);
    expect(server.calls.filter((c) => c.path === '/v1/me/sessions')).toHaveLength(1);
    expect(writes.some((w) => w.includes('rt_'))).toBe(false);

    await gh.signOut();
    expect(writes.at(-1)).toBe(`${SESSION_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax; Secure`);
  });

  it('over http the cookie is not Secure; a stored session is mirrored at load, and an expired one is refreshed into it', async () => {
    const writes = stubDocument('http:');
    const server = fakeGatehouse(30);
    const shared = memoryAdapter();
    const first = client(server, shared);
    await first.load();
    await first.signIn.password({ email: 'a@example.test', password: 'pw' });
    first.destroy();
    await vi.advanceTimersByTimeAsync(60_000); // the stored token has expired
    writes.length = 0;
    const second = client(server, shared);
    await second.load();
    expect(writes.every((w) => !w.includes('Secure'))).toBe(true);
    expect(valueOf(writes.at(-1)!)).toBe(await second.getToken());
    expect(server.refreshCalls()).toHaveLength(1);
  });

  it('is off by default: no cookie is written', async () => {
    const writes = stubDocument('https:');
    const server = fakeGatehouse(30);
    const gh = client(server, memoryAdapter(), false);
    await gh.load();
    await gh.signIn.password({ email: 'a@example.test', password: 'pw' });
    await gh.signOut();
    expect(writes).toEqual([]);
  });
});
