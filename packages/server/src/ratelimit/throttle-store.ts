import { lockMs, type ThrottlePolicy } from './throttle-policies.js';
import type { Clock } from './window.js';

export interface ThrottleCheck {
  policy: ThrottlePolicy;
  /** The storage key of the policy's subject. */
  key: string;
}

export type AttemptOutcome =
  | { admitted: true; /** Each check's count including this attempt. */ counts: number[]; nowMs: number }
  | { admitted: false; /** How long the longest lock among the checks still runs. */ waitMs: number; nowMs: number };

/** Both stores do the same thing: see THROTTLE_ATTEMPT_LUA for the rules. */
export interface ThrottleStore {
  attempt(checks: readonly ThrottleCheck[]): AttemptOutcome | Promise<AttemptOutcome>;
  settle(checks: readonly ThrottleCheck[]): void | Promise<void>;
}

interface Entry {
  count: number;
  lockedUntil: number;
  expiresAt: number;
}

/** The per-node store: used without Redis, and by every node while Redis is unreachable. */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly entries = new Map<string, Entry>();
  private nextSweep = 0;

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.entries.size;
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  attempt(checks: readonly ThrottleCheck[]): AttemptOutcome {
    const now = this.clock();
    this.sweep(now);
    let waitMs = 0;
    for (const { key } of checks) waitMs = Math.max(waitMs, (this.live(key, now)?.lockedUntil ?? 0) - now);
    if (waitMs > 0) return { admitted: false, waitMs, nowMs: now };
    const counts = checks.map(({ policy, key }) => {
      const entry = this.live(key, now) ?? { count: 0, lockedUntil: 0, expiresAt: 0 };
      entry.count += 1;
      const lock = lockMs(policy, entry.count);
      if (lock > 0) entry.lockedUntil = now + lock;
      entry.expiresAt = now + policy.windowMs;
      this.entries.set(key, entry);
      return entry.count;
    });
    return { admitted: true, counts, nowMs: now };
  }

  settle(checks: readonly ThrottleCheck[]): void {
    for (const { policy, key } of checks) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      if (policy.onSuccess === 'clear' || entry.count <= 1) {
        this.entries.delete(key);
        continue;
      }
      entry.count -= 1;
      if (entry.count < policy.free) entry.lockedUntil = 0;
    }
  }

  /** Drops expired records at most once a minute, so memory follows the active subjects. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + 60_000;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
