import { describe, expect, it } from 'vitest';
import { parseChange, type Change } from '../../src/db/changes.js';
import { RowCache } from '../../src/db/row-cache.js';

const SESSION_KINDS = new Set<Change['kind']>(['environment', 'session', 'user']);
const LIST_KINDS = new Set<Change['kind']>(['environment', 'user', 'organizations']);

function sessions(options: ConstructorParameters<typeof RowCache>[2] = {}) {
  const cache = new RowCache<string>('sessionId', SESSION_KINDS, options);
  cache.setTrusted(true);
  const put = (environmentId: string, userId: string, sessionId: string) =>
    cache.set({ environmentId, userId, sessionId }, `${userId}/${sessionId}`, cache.generation);
  return { cache, put };
}

describe('RowCache', () => {
  it('serves nothing until changes are known to arrive, and forgets everything when that changes', () => {
    const cache = new RowCache<string>('sessionId', SESSION_KINDS);
    cache.set({ environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' }, 'row', cache.generation);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();

    cache.setTrusted(true);
    cache.set({ environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' }, 'row', cache.generation);
    expect(cache.get('env_a', 'sess_1')).toBe('row');
    cache.setTrusted(false);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    cache.setTrusted(true);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
  });

  it('does not store a read that raced a change', () => {
    const { cache } = sessions();
    const before = cache.generation;
    // The read began, then the session was revoked and announced, then the read finished.
    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' });
    cache.set({ environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' }, 'stale row', before);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
  });

  it("lets a read finish when another session or another user changed meanwhile (every refresh and sign-in announces one), but not after its own user's", () => {
    const { cache } = sessions();
    const tags = { environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' };
    let before = cache.generation;
    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_2' });
    cache.apply({ kind: 'session', environmentId: 'env_b', sessionId: 'sess_1' });
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_9' });
    cache.apply({ kind: 'user', environmentId: 'env_b', userId: 'user_1' });
    cache.set(tags, 'row', before);
    expect(cache.get('env_a', 'sess_1')).toBe('row');

    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' });
    before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    cache.set(tags, 'row read before its user changed', before);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    // Another session of that user, read before the change, is refused too.
    cache.set({ ...tags, sessionId: 'sess_5' }, 'another row read before its user changed', before);
    expect(cache.get('env_a', 'sess_5')).toBeUndefined();
  });

  it("drops only the changed user's sessions however many others are cached, and keeps serving the rest", () => {
    const { cache, put } = sessions({ maxEntries: 5_000 });
    for (let i = 0; i < 4_000; i++) put('env_a', `user_${i}`, `sess_${i}`);
    put('env_a', 'user_7', 'sess_7b');
    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_7' });
    expect(cache.get('env_a', 'sess_7')).toBeUndefined();
    expect(cache.get('env_a', 'sess_7b')).toBeUndefined();
    for (let i = 0; i < 4_000; i++) if (i !== 7) expect(cache.get('env_a', `sess_${i}`)).toBe(`user_${i}/sess_${i}`);
    cache.set({ environmentId: 'env_a', userId: 'user_8', sessionId: 'sess_8b' }, 'read meanwhile', before);
    expect(cache.get('env_a', 'sess_8b')).toBe('read meanwhile');
  });

  it("forgets an evicted or expired session from its user's keys: a later change of the user drops only what is cached", () => {
    let now = 1_000;
    const { cache, put } = sessions({ maxEntries: 2, ttlMs: 100, clock: () => now });
    put('env_a', 'user_1', 'sess_1');
    put('env_a', 'user_1', 'sess_2');
    put('env_a', 'user_2', 'sess_3'); // evicts sess_1
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    now += 100;
    expect(cache.get('env_a', 'sess_2')).toBeUndefined(); // expired
    put('env_a', 'user_1', 'sess_1');
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    put('env_a', 'user_2', 'sess_4');
    expect(cache.get('env_a', 'sess_4')).toBe('user_2/sess_4');
    // sess_3 (expired, not yet read) and sess_4, each indexed once.
    expect(cache.sizes()).toEqual({ entries: 2, indexed: 2 });
  });

  it('keeps its per-user index exactly in step with its entries through replacement, eviction, expiry and changes', () => {
    let now = 1_000;
    const { cache, put } = sessions({ maxEntries: 4, ttlMs: 100, clock: () => now });
    const check = () => {
      const { entries, indexed } = cache.sizes();
      expect(indexed).toBe(entries);
    };
    for (let round = 0; round < 200; round++) {
      const user = `user_${round % 3}`;
      put('env_a', user, `sess_${round % 7}`); // replaces, and evicts past 4
      check();
      if (round % 5 === 0) cache.apply({ kind: 'user', environmentId: 'env_a', userId: user });
      if (round % 11 === 0) cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: `sess_${round % 7}` });
      if (round % 13 === 0) cache.apply({ kind: 'environment', environmentId: 'env_a' });
      check();
      if (round % 17 === 0) {
        now += 100;
        for (let i = 0; i < 7; i++) cache.get('env_a', `sess_${i}`); // expired: each is dropped
        expect(cache.sizes()).toEqual({ entries: 0, indexed: 0 });
      }
    }
    cache.setTrusted(true);
    expect(cache.sizes()).toEqual({ entries: 0, indexed: 0 });
  });

  it('holds an entry under the user it was stored for, whatever the caller does later with the tags', () => {
    const { cache } = sessions();
    const tags = { environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' };
    cache.set(tags, 'row', cache.generation);
    tags.userId = 'user_2';
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    expect(cache.sizes()).toEqual({ entries: 0, indexed: 0 });
  });

  it('still refuses a racing read after forgetting old per-session marks', () => {
    const { cache } = sessions({ maxEntries: 3 });
    const before = cache.generation;
    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' });
    for (let i = 2; i < 10; i++) cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: `sess_${i}` });
    cache.set({ environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' }, 'stale row', before);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
  });

  it('still refuses a racing read after forgetting old per-user marks', () => {
    const { cache } = sessions({ maxEntries: 3 });
    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    for (let i = 2; i < 10; i++) cache.apply({ kind: 'user', environmentId: 'env_a', userId: `user_${i}` });
    cache.set({ environmentId: 'env_a', userId: 'user_1', sessionId: 'sess_1' }, 'stale row', before);
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
  });

  it('drops a session, every session of a user, or an environment, and nothing else', () => {
    const { cache, put } = sessions();
    put('env_a', 'user_1', 'sess_1');
    put('env_a', 'user_1', 'sess_2');
    put('env_a', 'user_2', 'sess_3');
    put('env_b', 'user_1', 'sess_4');

    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' });
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    expect(cache.get('env_a', 'sess_2')).toBe('user_1/sess_2');

    // A session id from another environment names another session.
    cache.apply({ kind: 'session', environmentId: 'env_b', sessionId: 'sess_3' });
    expect(cache.get('env_a', 'sess_3')).toBe('user_2/sess_3');

    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    expect(cache.get('env_a', 'sess_2')).toBeUndefined();
    expect(cache.get('env_a', 'sess_3')).toBe('user_2/sess_3');
    expect(cache.get('env_b', 'sess_4')).toBe('user_1/sess_4');

    cache.apply({ kind: 'organizations', environmentId: 'env_a' });
    expect(cache.get('env_a', 'sess_3')).toBe('user_2/sess_3');

    cache.apply({ kind: 'environment', environmentId: 'env_a' });
    expect(cache.get('env_a', 'sess_3')).toBeUndefined();
    expect(cache.get('env_b', 'sess_4')).toBe('user_1/sess_4');
  });

  it("drops one user's list, or every list of an environment", () => {
    const cache = new RowCache<string>('userId', LIST_KINDS);
    cache.setTrusted(true);
    for (const [environmentId, userId] of [
      ['env_a', 'user_1'],
      ['env_a', 'user_2'],
      ['env_b', 'user_1'],
    ] as const) {
      cache.set({ environmentId, userId }, `${environmentId}/${userId}`, cache.generation);
    }
    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' });
    expect(cache.get('env_a', 'user_1')).toBe('env_a/user_1');

    cache.apply({ kind: 'organizations', environmentId: 'env_a', userId: 'user_1' });
    expect(cache.get('env_a', 'user_1')).toBeUndefined();
    expect(cache.get('env_a', 'user_2')).toBe('env_a/user_2');

    cache.apply({ kind: 'organizations', environmentId: 'env_a' });
    expect(cache.get('env_a', 'user_2')).toBeUndefined();
    expect(cache.get('env_b', 'user_1')).toBe('env_b/user_1');
  });

  it('expires entries and stays bounded', () => {
    let now = 1_000;
    const { cache, put } = sessions({ ttlMs: 100, maxEntries: 3, clock: () => now });
    put('env_a', 'user_1', 'sess_1');
    now += 100;
    expect(cache.get('env_a', 'sess_1')).toBeUndefined();
    for (let i = 0; i < 10; i++) put('env_a', 'user_1', `sess_${i}`);
    expect(cache.get('env_a', 'sess_0')).toBeUndefined();
    expect(cache.get('env_a', 'sess_9')).toBe('user_1/sess_9');
  });
});

describe('parseChange (announcements relayed by other nodes)', () => {
  it('reads every kind of change', () => {
    const changes: Change[] = [
      { kind: 'environment', environmentId: 'env_a' },
      { kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' },
      { kind: 'user', environmentId: 'env_a', userId: 'user_1' },
      { kind: 'organizations', environmentId: 'env_a' },
      { kind: 'organizations', environmentId: 'env_a', userId: 'user_1' },
    ];
    for (const change of changes) expect(parseChange(JSON.stringify(change))).toEqual(change);
  });

  it('refuses anything else', () => {
    for (const message of [
      'env_a',
      'null',
      '[]',
      '{"kind":"session","environmentId":"env_a"}',
      '{"kind":"user","environmentId":"env_a","userId":7}',
      '{"kind":"organizations","environmentId":"env_a","userId":null}',
      '{"kind":"everything","environmentId":"env_a"}',
      '{"kind":"environment"}',
    ]) {
      expect(parseChange(message), message).toBeUndefined();
    }
  });
});
