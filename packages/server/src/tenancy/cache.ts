import type { Environment } from './settings.js';

export type Clock = () => number;

export interface SecretKeyHit {
  environment: Environment;
  secretKeyId: string;
}

interface Entry<T> {
  value: T;
  environmentId: string;
  expiresAt: number;
}

export interface TenancyCacheOptions {
  clock?: Clock;
  /** Lifetime while invalidations are known to arrive (single node, or Redis subscribed). */
  ttlMs?: number;
  /** Lifetime while they may be missed (Redis away, or several nodes with no Redis). */
  untrustedTtlMs?: number;
  maxEntries?: number;
}

/**
 * Per-process cache of credential and environment look-ups, keyed by key hash or environment id.
 * Only hits are cached, so a new key works at once. Any change to an environment (settings, a
 * revoked key) drops every entry of that environment.
 */
export class TenancyCache {
  private readonly environments = new Map<string, Entry<Environment>>();
  private readonly publishable = new Map<string, Entry<Environment>>();
  private readonly secret = new Map<string, Entry<SecretKeyHit>>();
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly untrustedTtlMs: number;
  private readonly maxEntries: number;
  private trusted = true;
  /** Bumped by every invalidation; a look-up that raced one does not store its result. */
  generation = 0;

  constructor(options: TenancyCacheOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.ttlMs = options.ttlMs ?? 30_000;
    this.untrustedTtlMs = options.untrustedTtlMs ?? 1_000;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** Whether invalidations are known to arrive. Either change empties the cache. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }

  getEnvironment(id: string): Environment | undefined {
    return this.get(this.environments, id);
  }
  getPublishable(hash: string): Environment | undefined {
    return this.get(this.publishable, hash);
  }
  getSecret(hash: string): SecretKeyHit | undefined {
    return this.get(this.secret, hash);
  }

  setEnvironment(id: string, value: Environment, generation: number): void {
    this.set(this.environments, id, freezeEnvironment(value), value.id, generation);
  }
  setPublishable(hash: string, value: Environment, generation: number): void {
    this.set(this.publishable, hash, freezeEnvironment(value), value.id, generation);
  }
  setSecret(hash: string, value: SecretKeyHit, generation: number): void {
    freezeEnvironment(value.environment);
    this.set(this.secret, hash, Object.freeze(value), value.environment.id, generation);
  }

  invalidateEnvironment(environmentId: string): void {
    this.generation++;
    for (const map of [this.environments, this.publishable, this.secret] as Map<string, Entry<unknown>>[]) {
      for (const [key, entry] of map) if (entry.environmentId === environmentId) map.delete(key);
    }
  }

  clear(): void {
    this.generation++;
    this.environments.clear();
    this.publishable.clear();
    this.secret.clear();
  }

  private get<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock()) {
      map.delete(key);
      return undefined;
    }
    return entry.value;
  }

  private set<T>(map: Map<string, Entry<T>>, key: string, value: T, environmentId: string, generation: number): void {
    if (generation !== this.generation) return;
    map.delete(key);
    if (map.size >= this.maxEntries) map.delete(map.keys().next().value!);
    map.set(key, { value, environmentId, expiresAt: this.clock() + (this.trusted ? this.ttlMs : this.untrustedTtlMs) });
  }
}

/** Cached objects are shared by every request: a caller that mutates one would change them all. */
export function freezeEnvironment(environment: Environment): Environment {
  Object.freeze(environment.settings.authMethods);
  Object.freeze(environment.settings.callbackOrigins);
  Object.freeze(environment.settings);
  return Object.freeze(environment);
}
