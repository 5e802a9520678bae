import { describe, expect, it } from 'vitest';
import { KeyCache, type KeyRecord } from '../../src/apikeys/cache.js';

function record(id: string, owner: { userId: string } | { organizationId: string }): KeyRecord {
  return {
    id,
    userId: 'userId' in owner ? owner.userId : null,
    organizationId: 'organizationId' in owner ? owner.organizationId : null,
    secretHash: `hash-${id}`,
    scopes: [],
    expiresAt: null,
    lastUsedAt: null,
  };
}

function trusted(options: ConstructorParameters<typeof KeyCache>[0] = {}) {
  const cache = new KeyCache(options);
  cache.setTrusted(true);
  const put = (environmentId: string, lookup: string, records: KeyRecord[]) => cache.set(environmentId, lookup, records, cache.generation);
  return { cache, put };
}

describe('KeyCache', () => {
  it("drops a user's keys when the user changes (a ban, a deletion), and only theirs", () => {
    const { cache, put } = trusted();
    put('env_a', 'l1', [record('ak_1', { userId: 'user_1' })]);
    put('env_a', 'l2', [record('ak_2', { userId: 'user_1' })]);
    put('env_a', 'l3', [record('ak_3', { userId: 'user_2' })]);
    put('env_a', 'l4', [record('ak_4', { organizationId: 'org_1' })]);
    put('env_b', 'l5', [record('ak_5', { userId: 'user_1' })]);

    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    expect(cache.get('env_a', 'l1')).toBeUndefined();
    expect(cache.get('env_a', 'l2')).toBeUndefined();
    expect(cache.get('env_a', 'l3')?.[0]?.id).toBe('ak_3');
    expect(cache.get('env_a', 'l4')?.[0]?.id).toBe('ak_4');
    // The same user id in another environment is another user.
    expect(cache.get('env_b', 'l5')?.[0]?.id).toBe('ak_5');
    expect(cache.sizes()).toMatchObject({ entries: 3, indexed: 2, indexedUsers: 2 });
  });

  it("refuses a read that raced its key's user's change (a ban during the read), not one that raced another user's", () => {
    const { cache } = trusted();
    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    cache.set('env_a', 'l1', [record('ak_1', { userId: 'user_1' })], before);
    expect(cache.get('env_a', 'l1')).toBeUndefined();
    // Every sign-in stamps its user: another user's sign-in does not cancel this read.
    cache.set('env_a', 'l2', [record('ak_2', { userId: 'user_2' })], before);
    expect(cache.get('env_a', 'l2')?.[0]?.id).toBe('ak_2');
    cache.set('env_a', 'l3', [record('ak_3', { organizationId: 'org_1' })], before);
    expect(cache.get('env_a', 'l3')?.[0]?.id).toBe('ak_3');
  });

  it('refuses every read in flight after a revocation, an organization change or an environment change', () => {
    for (const change of [
      { kind: 'apiKey', environmentId: 'env_a', keyId: 'ak_9' },
      { kind: 'organizations', environmentId: 'env_a' },
      { kind: 'environment', environmentId: 'env_a' },
    ] as const) {
      const { cache } = trusted();
      const before = cache.generation;
      cache.apply(change);
      cache.set('env_a', 'l1', [record('ak_1', { userId: 'user_1' })], before);
      expect(cache.get('env_a', 'l1'), change.kind).toBeUndefined();
    }
  });

  it('drops a revoked key, an organization change drops organization keys, an environment change drops all of it', () => {
    const { cache, put } = trusted();
    put('env_a', 'l1', [record('ak_1', { userId: 'user_1' })]);
    put('env_a', 'l2', [record('ak_2', { organizationId: 'org_1' })]);
    put('env_a', 'l3', [record('ak_3', { userId: 'user_2' })]);
    put('env_b', 'l4', [record('ak_4', { userId: 'user_2' })]);
    cache.apply({ kind: 'apiKey', environmentId: 'env_a', keyId: 'ak_1' });
    expect(cache.get('env_a', 'l1')).toBeUndefined();
    cache.apply({ kind: 'organizations', environmentId: 'env_a' });
    expect(cache.get('env_a', 'l2')).toBeUndefined();
    expect(cache.get('env_a', 'l3')?.[0]?.id).toBe('ak_3');
    cache.apply({ kind: 'session', environmentId: 'env_a', sessionId: 'sess_1' });
    cache.apply({ kind: 'organizations', environmentId: 'env_a', userId: 'user_2' });
    expect(cache.get('env_a', 'l3')?.[0]?.id).toBe('ak_3');
    cache.apply({ kind: 'environment', environmentId: 'env_a' });
    expect(cache.get('env_a', 'l3')).toBeUndefined();
    expect(cache.get('env_b', 'l4')?.[0]?.id).toBe('ak_4');
    expect(cache.sizes()).toMatchObject({ entries: 1, indexed: 1, indexedUsers: 1 });
  });

  it("an entry holding keys of several users (a shared lookup part) answers to each user's change", () => {
    const { cache, put } = trusted();
    const both = [record('ak_1', { userId: 'user_1' }), record('ak_2', { userId: 'user_2' }), record('ak_3', { organizationId: 'org_1' })];
    put('env_a', 'l1', both);
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_2' });
    expect(cache.get('env_a', 'l1')).toBeUndefined();
    expect(cache.sizes()).toMatchObject({ entries: 0, indexed: 0, indexedUsers: 0 });

    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_2' });
    cache.set('env_a', 'l1', both, before);
    expect(cache.get('env_a', 'l1')).toBeUndefined();
  });

  it('a user whose rows the read left out (banned) drops the entry and cancels the read when they change (an unban)', () => {
    const { cache } = trusted();
    cache.set('env_a', 'l1', [record('ak_1', { userId: 'user_1' })], cache.generation, ['user_9']);
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_9' });
    expect(cache.get('env_a', 'l1')).toBeUndefined();

    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_9' });
    cache.set('env_a', 'l1', [record('ak_1', { userId: 'user_1' })], before, ['user_9']);
    expect(cache.get('env_a', 'l1')).toBeUndefined();
  });

  it("stores a read that began after its user's change, and one that raced the same user id of another environment", () => {
    const { cache } = trusted();
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    cache.set('env_a', 'l1', [record('ak_1', { userId: 'user_1' })], cache.generation);
    expect(cache.get('env_a', 'l1')?.[0]?.id).toBe('ak_1');

    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_b', userId: 'user_2' });
    cache.set('env_a', 'l2', [record('ak_2', { userId: 'user_2' })], before);
    expect(cache.get('env_a', 'l2')?.[0]?.id).toBe('ak_2');
  });

  it('keeps at most maxEntries per-user marks', () => {
    const { cache } = trusted({ maxEntries: 3 });
    for (let i = 0; i < 50; i++) cache.apply({ kind: 'user', environmentId: 'env_a', userId: `user_${i}` });
    expect(cache.sizes().marks).toBeLessThanOrEqual(3);
  });

  it('still refuses a racing read after forgetting old per-user marks', () => {
    const { cache } = trusted({ maxEntries: 3 });
    const before = cache.generation;
    cache.apply({ kind: 'user', environmentId: 'env_a', userId: 'user_1' });
    for (let i = 2; i < 10; i++) cache.apply({ kind: 'user', environmentId: 'env_a', userId: `user_${i}` });
    cache.set('env_a', 'l1', [record('ak_1', { userId: 'user_1' })], before);
    expect(cache.get('env_a', 'l1')).toBeUndefined();
  });

  it('keeps its per-user index in step with its entries through replacement, eviction, expiry, changes and trust', () => {
    let now = 1_000;
    const { cache, put } = trusted({ maxEntries: 4, ttlMs: 100, clock: () => now });
    const userKeys = () => {
      // Each cached entry here holds one key of one user: the index holds exactly the entries.
      const { entries, indexed } = cache.sizes();
      expect(indexed).toBe(entries);
    };
    for (let round = 0; round < 200; round++) {
      const user = `user_${round % 3}`;
      put('env_a', `l${round % 7}`, [record(`ak_${round}`, { userId: user })]);
      userKeys();
      if (round % 5 === 0) cache.apply({ kind: 'user', environmentId: 'env_a', userId: user });
      if (round % 11 === 0) cache.apply({ kind: 'apiKey', environmentId: 'env_a', keyId: `ak_${round}` });
      if (round % 13 === 0) cache.apply({ kind: 'environment', environmentId: 'env_a' });
      userKeys();
      if (round % 17 === 0) {
        now += 100;
        for (let i = 0; i < 7; i++) expect(cache.get('env_a', `l${i}`)).toBeUndefined();
        expect(cache.sizes()).toMatchObject({ entries: 0, indexed: 0, indexedUsers: 0 });
      }
    }
    expect(cache.sizes().marks).toBeLessThanOrEqual(4);
    cache.setTrusted(true);
    expect(cache.sizes()).toEqual({ entries: 0, indexed: 0, indexedUsers: 0, marks: 0 });
  });
});
