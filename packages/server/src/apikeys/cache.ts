import type { Change } from '../db/changes.js';
import { KeysByOwner } from '../db/keys-by-owner.js';

/** What a verification needs of a key row, frozen: cached copies are shared by every request. */
export interface KeyRecord {
  id: string;
  userId: string | null;
  organizationId: string | null;
  secretHash: string;
  scopes: readonly string[];
  expiresAt: number | null;
  lastUsedAt: number | null;
}

export interface KeyCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  clock?: () => number;
}

interface Entry {
  environmentId: string;
  records: readonly KeyRecord[];
  expiresAt: number;
  /** The users whose keys the entry holds (`userMark`), so that a user's change finds it. */
  users: readonly string[];
}

/**
 * Verified API keys per node, by environment and lookup part. A revocation (an `apiKey` change),
 * the deletion or ban of the key's user (`user`), the deletion of an organization (`organizations`
 * for the whole environment) or a change of the environment drops what it touched: on this node at
 * commit, on the others through Redis. Like the session cache it serves nothing until changes are
 * known to arrive (`setTrusted`), and with several nodes the service checks that this node has
 * caught up before it serves (CacheFreshness). The TTL only bounds an entry whose change was lost.
 *
 * Every sign-in changes its user (it stamps `last_sign_in_at`), so a user's change is the common
 * one: it finds that user's keys through an index and cancels only reads of that user's keys
 * (per-user marks), where every other change walks the cache and cancels every read in flight.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly keysOfUser = new KeysByOwner();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;
  private trusted = false;
  /** Read before a database read, and passed to `set`: a read that raced a change to what it read stores nothing. */
  generation = 0;
  private wideChangeAt = 0;
  /** The generation of each user's last change (`userMark`); bounded, past it a wide change. */
  private readonly userChangedAt = new Map<string, number>();

  constructor(options: KeyCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.wideChange();
    this.entries.clear();
    this.keysOfUser.clear();
  }

  get(environmentId: string, lookup: string): readonly KeyRecord[] | undefined {
    if (!this.trusted) return undefined;
    const key = `${environmentId}\u0000${lookup}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock()) {
      this.drop(key);
      return undefined;
    }
    return entry.records;
  }

  /**
   * Stores the rows a read found for `lookup`; `generation` is the one read before the read began.
   * `otherUsers`: users whose rows the read found and left out (banned): their change (an unban)
   * must drop the entry, and cancel the read, as a change of a kept row's user does.
   */
  set(environmentId: string, lookup: string, records: readonly KeyRecord[], generation: number, otherUsers: readonly string[] = []): void {
    if (!this.trusted || generation < this.wideChangeAt) return;
    const userIds = [...records.flatMap((r) => (r.userId === null ? [] : [r.userId])), ...otherUsers];
    const users = [...new Set(userIds.map((userId) => userMark(environmentId, userId)))];
    if (users.some((user) => generation < (this.userChangedAt.get(user) ?? 0))) return;
    const key = `${environmentId}\u0000${lookup}`;
    this.drop(key);
    if (this.entries.size >= this.maxEntries) this.drop(this.entries.keys().next().value!);
    this.entries.set(key, {
      environmentId,
      records: Object.freeze(records.map((r) => Object.freeze({ ...r }))),
      expiresAt: this.clock() + this.ttlMs,
      users,
    });
    for (const user of users) this.keysOfUser.add(user, key);
  }

  apply(change: Change): void {
    if (change.kind === 'user') {
      const user = userMark(change.environmentId, change.userId);
      this.generation++;
      // Bounded: forgetting the per-user marks is safe once every read in flight is cancelled.
      if (this.userChangedAt.size >= this.maxEntries) this.wideChange();
      this.userChangedAt.set(user, this.generation);
      for (const key of this.keysOfUser.keysOf(user)) this.drop(key);
      return;
    }
    const drops = dropper(change);
    if (!drops) return;
    this.wideChange();
    for (const [key, entry] of this.entries) {
      if (entry.environmentId === change.environmentId && entry.records.some(drops)) this.drop(key);
    }
  }

  /** For tests: entries cached; keys the per-user index holds, and its users; per-user marks kept. */
  sizes(): { entries: number; indexed: number; indexedUsers: number; marks: number } {
    const indexed = this.keysOfUser.sizes();
    return { entries: this.entries.size, indexed: indexed.keys, indexedUsers: indexed.owners, marks: this.userChangedAt.size };
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    for (const user of entry.users) this.keysOfUser.remove(user, key);
  }

  private wideChange(): void {
    this.generation++;
    this.wideChangeAt = this.generation;
    this.userChangedAt.clear();
  }
}

function userMark(environmentId: string, userId: string): string {
  return `${environmentId}\u0000${userId}`;
}

/** Which cached keys a change other than a user's touches; undefined for changes that touch none. */
function dropper(change: Exclude<Change, { kind: 'user' }>): ((record: KeyRecord) => boolean) | undefined {
  switch (change.kind) {
    case 'environment':
      return () => true;
    case 'apiKey':
      return (record) => record.id === change.keyId;
    case 'organizations':
      // Without a user: an organization was changed or deleted (its keys go with it).
      return change.userId === undefined ? (record) => record.organizationId !== null : undefined;
    case 'session':
      return undefined;
  }
}
