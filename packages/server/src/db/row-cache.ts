import type { Change } from './changes.js';
import { KeysByOwner } from './keys-by-owner.js';

/** What a cached value was read from, so that a change to any of it drops the value. */
export interface RowTags {
  environmentId: string;
  userId: string;
  sessionId?: string;
}

export interface RowCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  clock?: () => number;
}

interface Entry<V> {
  value: V;
  tags: RowTags;
  expiresAt: number;
  /** A session-keyed cache: the entry's user (`userMark`), fixed when it is stored. */
  user: string | undefined;
}

/**
 * A per-process cache of rows read on hot paths, keyed by session or by user within an environment,
 * and dropped by the changes it listens to (db/changes.ts). It serves nothing until told that
 * changes are known to arrive (`setTrusted(true)`: one SQLite node, or Redis subscribed), so a
 * node that could miss a change always reads the database. The TTL only bounds the life of an
 * entry whose change was lost in transit.
 */
export class RowCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /**
   * A cache keyed by session: the keys of each user's entries, so that a user's change (every
   * sign-in stamps the user) drops their sessions without walking the whole cache.
   */
  private readonly keysOfUser: KeysByOwner | undefined;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;
  private trusted = false;
  /**
   * Read before a read begins, and passed to `set`: a read that raced a change to what it read does
   * not store its result. Changes of one session or one user (every refresh and every sign-in
   * makes one) are tracked per key, so they only cancel reads of what they changed; wider changes
   * cancel every read in flight.
   */
  generation = 0;
  private wideChangeAt = 0;
  /** The generation of each key's last change: an entry's key, or a user's (`userMark`). */
  private readonly keyChangedAt = new Map<string, number>();

  constructor(
    private readonly keyedBy: 'sessionId' | 'userId',
    private readonly listensTo: ReadonlySet<Change['kind']>,
    options: RowCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
    if (keyedBy === 'sessionId') this.keysOfUser = new KeysByOwner();
  }

  /** Whether changes are known to arrive. Either way the cache starts empty. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.wideChange();
    this.entries.clear();
    this.keysOfUser?.clear();
  }

  /** `id` is the session id or the user id, as the cache is keyed. */
  get(environmentId: string, id: string): V | undefined {
    if (!this.trusted) return undefined;
    const key = `${environmentId}\u0000${id}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock()) {
      this.drop(key);
      return undefined;
    }
    return entry.value;
  }

  /** Stores what a read found; `generation` is the one read before the read began. */
  set(tags: RowTags, value: V, generation: number): void {
    const id = tags[this.keyedBy];
    if (id === undefined) throw new Error(`RowCache keyed by ${this.keyedBy} needs it in the tags`);
    const key = `${tags.environmentId}\u0000${id}`;
    if (!this.trusted || generation < this.wideChangeAt || generation < (this.keyChangedAt.get(key) ?? 0)) return;
    const user = this.keysOfUser ? userMark(tags.environmentId, tags.userId) : undefined;
    if (user !== undefined && generation < (this.keyChangedAt.get(user) ?? 0)) return;
    this.drop(key);
    if (this.entries.size >= this.maxEntries) this.drop(this.entries.keys().next().value!);
    this.entries.set(key, { value, tags, expiresAt: this.clock() + this.ttlMs, user });
    if (user !== undefined) this.keysOfUser!.add(user, key);
  }

  apply(change: Change): void {
    if (!this.listensTo.has(change.kind) || change.kind === 'apiKey') return;
    if (change.kind === 'session' && this.keyedBy === 'sessionId') {
      const key = `${change.environmentId}\u0000${change.sessionId}`;
      this.markChanged(key);
      this.drop(key);
      return;
    }
    if ((change.kind === 'user' || change.kind === 'organizations') && change.userId !== undefined) {
      if (this.keyedBy === 'userId') {
        const key = `${change.environmentId}\u0000${change.userId}`;
        this.markChanged(key);
        this.drop(key);
        return;
      }
      const user = userMark(change.environmentId, change.userId);
      this.markChanged(user);
      for (const key of this.keysOfUser!.keysOf(user)) this.drop(key);
      return;
    }
    this.wideChange();
    for (const [key, entry] of this.entries) if (affects(change, entry.tags)) this.drop(key);
  }

  private markChanged(key: string): void {
    this.generation++;
    // Bounded: forgetting the per-key marks is safe once every read in flight is cancelled.
    if (this.keyChangedAt.size >= this.maxEntries) this.wideChange();
    this.keyChangedAt.set(key, this.generation);
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (entry.user !== undefined) this.keysOfUser!.remove(entry.user, key);
  }

  /** How many entries are cached, and how many keys the per-user index holds (for tests: they must agree). */
  sizes(): { entries: number; indexed: number } {
    return { entries: this.entries.size, indexed: this.keysOfUser?.sizes().keys ?? 0 };
  }

  private wideChange(): void {
    this.generation++;
    this.wideChangeAt = this.generation;
    this.keyChangedAt.clear();
  }
}

/**
 * A user's key among `keyChangedAt`'s entry keys, which begin with an environment id (`env_…`),
 * never with a NUL.
 */
function userMark(environmentId: string, userId: string): string {
  return `\u0000${environmentId}\u0000${userId}`;
}

function affects(change: Change, tags: RowTags): boolean {
  if (change.environmentId !== tags.environmentId) return false;
  switch (change.kind) {
    case 'environment':
      return true;
    case 'session':
      return change.sessionId === tags.sessionId;
    case 'user':
      return change.userId === tags.userId;
    case 'organizations':
      return change.userId === undefined || change.userId === tags.userId;
    case 'apiKey':
      return false;
  }
}
