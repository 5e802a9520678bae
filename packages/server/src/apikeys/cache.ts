import type { Change } from '../db/changes.js';

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
}

/**
 * Verified API keys per node, by environment and lookup part. A revocation (an `apiKey` change),
 * the deletion or ban of the key's user (`user`), the deletion of an organization (`organizations`
 * for the whole environment) or a change of the environment drops what it touched: on this node at
 * commit, on the others through Redis. Like the session cache it serves nothing until changes are
 * known to arrive (`setTrusted`), and with several nodes the service checks that this node has
 * caught up before it serves (CacheFreshness). The TTL only bounds an entry whose change was lost.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;
  private trusted = false;
  /** Read before a database read; a read that raced any change stores nothing (see `set`). */
  generation = 0;

  constructor(options: KeyCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.generation++;
    this.entries.clear();
  }

  get(environmentId: string, lookup: string): readonly KeyRecord[] | undefined {
    if (!this.trusted) return undefined;
    const key = `${environmentId}\u0000${lookup}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.records;
  }

  /** Stores the rows a read found for `lookup`; `generation` is the one read before the read began. */
  set(environmentId: string, lookup: string, records: readonly KeyRecord[], generation: number): void {
    if (!this.trusted || generation !== this.generation) return;
    const key = `${environmentId}\u0000${lookup}`;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, {
      environmentId,
      records: Object.freeze(records.map((r) => Object.freeze({ ...r }))),
      expiresAt: this.clock() + this.ttlMs,
    });
  }

  apply(change: Change): void {
    const drops = dropper(change);
    if (!drops) return;
    this.generation++;
    for (const [key, entry] of this.entries) {
      if (entry.environmentId === change.environmentId && entry.records.some(drops)) this.entries.delete(key);
    }
  }
}

/** Which cached keys a change touches; undefined for changes that touch none. */
function dropper(change: Change): ((record: KeyRecord) => boolean) | undefined {
  switch (change.kind) {
    case 'environment':
      return () => true;
    case 'apiKey':
      return (record) => record.id === change.keyId;
    case 'user':
      return (record) => record.userId === change.userId;
    case 'organizations':
      // Without a user: an organization was changed or deleted (its keys go with it).
      return change.userId === undefined ? (record) => record.organizationId !== null : undefined;
    case 'session':
      return undefined;
  }
}
