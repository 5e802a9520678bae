import { testEnvironmentId } from '../helpers/ids.js';
import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../src/db/changes.js';
import { TenancyCache } from '../../src/tenancy/cache.js';
import { defaultSettings, type Environment } from '../../src/tenancy/settings.js';

const env = (id: string): Environment => ({
  id: testEnvironmentId(id),
  projectId: 'proj_1',
  type: 'development',
  publishableKey: `pk_test_${id}`,
  settings: defaultSettings(),
});

describe('tenancy cache', () => {
  it('expires entries after the trusted lifetime, or the short one while invalidations may be missed', () => {
    let now = 0;
    const cache = new TenancyCache({ clock: () => now, ttlMs: 30_000, untrustedTtlMs: 1_000 });
    cache.setPublishable('h1', env('env_a'), cache.generation);
    now = 29_999;
    expect(cache.getPublishable('h1')?.id).toBe('env_a');
    now = 30_000;
    expect(cache.getPublishable('h1')).toBeUndefined();

    cache.setTrusted(false);
    cache.setPublishable('h1', env('env_a'), cache.generation);
    now = 30_999;
    expect(cache.getPublishable('h1')).toBeDefined();
    now = 31_000;
    expect(cache.getPublishable('h1')).toBeUndefined();
  });

  it('drops every entry of a changed environment and nothing else', () => {
    const cache = new TenancyCache();
    cache.setPublishable('pa', env('env_a'), cache.generation);
    cache.setSecret('sa', { environment: env('env_a'), secretKeyId: 'sk_1' }, cache.generation);
    cache.setEnvironment('env_a', env('env_a'), cache.generation);
    cache.setSecret('sb', { environment: env('env_b'), secretKeyId: 'sk_2' }, cache.generation);
    cache.invalidateEnvironment('env_a');
    expect([cache.getPublishable('pa'), cache.getSecret('sa'), cache.getEnvironment('env_a')]).toEqual([undefined, undefined, undefined]);
    expect(cache.getSecret('sb')?.secretKeyId).toBe('sk_2');
  });

  it('does not store a look-up that raced an invalidation', () => {
    const cache = new TenancyCache();
    const before = cache.generation;
    cache.invalidateEnvironment('env_a'); // arrives while the database read is in flight
    cache.setEnvironment('env_a', env('env_a'), before);
    expect(cache.getEnvironment('env_a')).toBeUndefined();
  });

  it('stays bounded', () => {
    const cache = new TenancyCache({ maxEntries: 3 });
    for (let i = 0; i < 10; i++) cache.setEnvironment(`env_${i}`, env(`env_${i}`), cache.generation);
    expect(cache.getEnvironment('env_0')).toBeUndefined();
    expect(cache.getEnvironment('env_9')).toBeDefined();
  });

  it('relays local changes out and delivers remote ones only locally', () => {
    const feed = new ChangeFeed();
    const heard: string[] = [];
    const relayed: string[] = [];
    feed.subscribe((change) => heard.push(change.environmentId));
    feed.relay((change) => relayed.push(change.environmentId));
    feed.publish({ kind: 'environment', environmentId: 'env_local' });
    feed.deliver({ kind: 'environment', environmentId: 'env_remote' });
    expect(heard).toEqual(['env_local', 'env_remote']);
    expect(relayed).toEqual(['env_local']);
  });
});
