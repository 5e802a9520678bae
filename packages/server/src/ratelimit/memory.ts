import { DEFAULT_GRANULARITY_MS, slotCount, WINDOW_MS, type Clock, type RateLimitDecision, type RateLimitStore } from './window.js';

interface Ring {
  /** Newest bucket seen; the window is head-slots+1 … head. */
  head: number;
  /** Every bucket below this one is known to be empty. */
  lo: number;
  /** Sum of the ring. */
  total: number;
  counts: Uint32Array;
  /** Per bucket, the offset (ms into the bucket) of its last admission: the bucket leaves 60 s after it. */
  latest: Uint16Array;
}

export interface MemoryStoreOptions {
  clock: Clock;
  windowMs?: number;
  granularityMs?: number;
}

/**
 * The per-node window: one fixed ring of counters per key, so memory is `4 × slots` bytes per
 * active key whatever the limit. Keys idle for a whole window are dropped by a sweep that runs at
 * most once per window.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly rings = new Map<string, Ring>();
  private readonly clock: Clock;
  private readonly granularityMs: number;
  private readonly slots: number;
  private readonly windowMs: number;
  private lastSweepBucket = -Infinity;

  constructor(options: MemoryStoreOptions) {
    this.clock = options.clock;
    this.granularityMs = options.granularityMs ?? DEFAULT_GRANULARITY_MS;
    this.windowMs = options.windowMs ?? WINDOW_MS;
    this.slots = slotCount({ windowMs: this.windowMs, granularityMs: this.granularityMs });
  }

  get size(): number {
    return this.rings.size;
  }

  hit(key: string, limit: number): RateLimitDecision {
    const nowMs = this.clock();
    const n = this.slots;
    let bucket = Math.floor(nowMs / this.granularityMs);
    this.sweep(bucket);

    let ring = this.rings.get(key);
    if (!ring) {
      ring = { head: bucket, lo: bucket, total: 0, counts: new Uint32Array(n), latest: new Uint16Array(n) };
      this.rings.set(key, ring);
    }
    // A clock that steps back must not reopen buckets already counted: stay in the newest one.
    if (bucket < ring.head) bucket = ring.head;
    else if (bucket > ring.head) advance(ring, bucket, n);
    // Behind the head (a clock that stepped back) counts as the head's first millisecond.
    const offset = Math.max(0, nowMs - bucket * this.granularityMs);
    expireOldest(ring, bucket, offset, n);

    const allowed = ring.total < limit;
    if (allowed) {
      const i = bucket % n;
      ring.latest[i] = ring.counts[i] === 0 ? offset : Math.max(ring.latest[i]!, offset);
      ring.counts[i]!++;
      ring.total++;
    }
    const remaining = Math.max(0, limit - ring.total);
    const freeAtMs = remaining > 0 ? nowMs : this.freeAt(ring, bucket, limit);
    return { allowed, limit, remaining, freeAtMs, nowMs };
  }

  /** When enough of the oldest buckets have left for one request to fit. */
  private freeAt(ring: Ring, bucket: number, limit: number): number {
    const n = this.slots;
    const need = ring.total - limit + 1;
    let freed = 0;
    for (let x = Math.max(ring.lo, bucket - n + 1); x <= bucket; x++) {
      const count = ring.counts[x % n]!;
      if (count === 0) continue;
      if (freed === 0) ring.lo = x;
      freed += count;
      if (freed >= need) return x * this.granularityMs + ring.latest[x % n]! + this.windowMs;
    }
    return (bucket + n) * this.granularityMs;
  }

  private sweep(bucket: number): void {
    if (bucket - this.lastSweepBucket < this.slots) return;
    this.lastSweepBucket = bucket;
    for (const [key, ring] of this.rings) {
      if (bucket - ring.head >= this.slots) this.rings.delete(key);
    }
  }
}

/**
 * The oldest bucket of the ring, b − W/g, leaves the window within bucket b: once 60 s have passed
 * since its last admission. Every younger bucket is whole inside the trailing 60 s.
 */
function expireOldest(ring: Ring, bucket: number, offset: number, n: number): void {
  const oldest = bucket - n + 1;
  if (oldest < ring.lo) return;
  const i = oldest % n;
  const count = ring.counts[i]!;
  if (count === 0 || offset < ring.latest[i]!) return;
  ring.total -= count;
  ring.counts[i] = 0;
  ring.lo = oldest + 1;
}

function advance(ring: Ring, bucket: number, n: number): void {
  if (bucket - ring.head >= n) {
    ring.counts.fill(0);
    ring.total = 0;
    ring.lo = bucket;
  } else {
    // Buckets head-n+1 … bucket-n leave the window.
    const leaving = bucket - n;
    for (let x = Math.max(ring.lo, ring.head - n + 1); x <= leaving; x++) {
      const i = x % n;
      ring.total -= ring.counts[i]!;
      ring.counts[i] = 0;
    }
    if (ring.lo <= leaving) ring.lo = leaving + 1;
  }
  ring.head = bucket;
}
