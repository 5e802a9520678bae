/**
 * Cache keys grouped by the owner of what they hold (a user): what a cache drops when that owner
 * changes, without walking every entry. Empty groups are forgotten.
 */
export class KeysByOwner {
  private readonly groups = new Map<string, Set<string>>();

  add(owner: string, key: string): void {
    const keys = this.groups.get(owner);
    if (keys) keys.add(key);
    else this.groups.set(owner, new Set([key]));
  }

  remove(owner: string, key: string): void {
    const keys = this.groups.get(owner);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.groups.delete(owner);
  }

  /** The owner's keys, as a copy: the caller may remove them while it goes through them. */
  keysOf(owner: string): string[] {
    return [...(this.groups.get(owner) ?? [])];
  }

  clear(): void {
    this.groups.clear();
  }

  /** For tests: how many keys, and how many owners, are held. */
  sizes(): { keys: number; owners: number } {
    let keys = 0;
    for (const group of this.groups.values()) keys += group.size;
    return { keys, owners: this.groups.size };
  }
}
