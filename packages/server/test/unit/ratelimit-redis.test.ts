import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitKey, RedisRateLimitStore } from '../../src/ratelimit/redis.js';
import { deletePrefix, REDIS_SUITE, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { simulate, T0 } from '../helpers/window.js';

describe.skipIf(!REDIS_URL)(`Redis sliding window ${REDIS_SUITE}`, () => {
  const prefix = testPrefix();
  const clients: Redis[] = [];
  let now = T0;

  beforeAll(() => {
    for (let i = 0; i < 6; i++) clients.push(new Redis(REDIS_URL!));
  });
  afterAll(async () => {
    await deletePrefix(clients[0]!, prefix);
    await Promise.all(clients.map((c) => c.quit()));
  });

  function stores(options: { clock?: boolean; granularityMs?: number } = {}) {
    return clients.map(
      (redis) =>
        new RedisRateLimitStore({
          redis,
          prefix,
          ...(options.clock === false ? {} : { clock: () => now }),
          ...(options.granularityMs ? { granularityMs: options.granularityMs } : {}),
        }),
    );
  }

  it.each([
    [100, 7, 11],
    [1000, 20, 12],
  ])('behaves exactly like the memory window under the same traffic (g=%i ms, limit %i)', async (g, limit, seed) => {
    const [store] = stores({ granularityMs: g });
    const key = `env_sim${seed}`;
    const { admitted, refused } = await simulate({
      limit,
      granularityMs: g,
      durationMs: 6 * 60_000,
      seed,
      hit: (t) => {
        now = t;
        return store!.hit(key, limit);
      },
    });
    expect(admitted).toBeGreaterThan(limit);
    expect(refused).toBeGreaterThan(0);
  });

  it('admits exactly the limit from concurrent clients, and exactly the limit again once the window has moved on', async () => {
    const all = stores();
    const burst = async (perClient: number) => {
      const decisions = await Promise.all(
        all.flatMap((store) => Array.from({ length: perClient }, () => store.hit('env_concurrent', 100))),
      );
      const admitted = decisions.filter((d) => d.allowed);
      return { admitted: admitted.length, remaining: admitted.map((d) => d.remaining).sort((a, b) => a - b), decisions };
    };
    now = T0;
    const first = await burst(50);
    expect(first.admitted).toBe(100);
    // Each admitted request saw a different count: the script ran atomically.
    expect(first.remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(first.decisions.filter((d) => !d.allowed).every((d) => d.freeAtMs === T0 + 60_000)).toBe(true);

    now = T0 + 30_000;
    expect((await burst(10)).admitted).toBe(0);
    now = T0 + 59_999;
    expect((await burst(10)).admitted).toBe(0);
    now = T0 + 60_000;
    expect((await burst(50)).admitted).toBe(100);
  });

  it('uses Redis time when no clock is injected, still exactly the limit under concurrency', async () => {
    const all = stores({ clock: false });
    const decisions = await Promise.all(all.flatMap((store) => Array.from({ length: 40 }, () => store.hit('env_servertime', 75))));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(75);
    const refused = decisions.find((d) => !d.allowed)!;
    expect(Math.abs(refused.nowMs - Date.now())).toBeLessThan(60_000);
    expect(refused.freeAtMs - refused.nowMs).toBeGreaterThan(59_000);
    expect(refused.freeAtMs - refused.nowMs).toBeLessThanOrEqual(60_000);
  });

  it('counts the requests of one environment that arrive together with one script call, still exactly', async () => {
    const redis = clients[5]!;
    const [store] = [new RedisRateLimitStore({ redis, prefix, clock: () => now })];
    const script = redis.gatehouseSlidingWindow.bind(redis);
    const calls: number[] = [];
    redis.gatehouseSlidingWindow = ((...args: Parameters<typeof script>) => {
      calls.push(args[6]);
      return script(...args);
    }) as typeof script;
    try {
      now = T0;
      // 30 requests of one environment and 5 of another in one turn: one call each, in arrival order.
      const together = await Promise.all([
        ...Array.from({ length: 30 }, () => store!.hit('env_together', 20)),
        ...Array.from({ length: 5 }, () => store!.hit('env_other', 20)),
      ]);
      expect(calls.sort((a, b) => a - b)).toEqual([5, 30]);
      const first = together.slice(0, 30);
      expect(first.map((d) => d.allowed)).toEqual([...Array<boolean>(20).fill(true), ...Array<boolean>(10).fill(false)]);
      expect(first.map((d) => d.remaining)).toEqual([...Array.from({ length: 20 }, (_, i) => 19 - i), ...Array<number>(10).fill(0)]);
      expect(first.slice(0, 19).every((d) => d.freeAtMs === d.nowMs)).toBe(true);
      expect(first.slice(19).every((d) => d.freeAtMs === T0 + 60_000)).toBe(true);

      // A request in a later turn is a call of its own, and the window is full.
      calls.length = 0;
      expect((await store!.hit('env_together', 20)).allowed).toBe(false);
      expect(calls).toEqual([1]);
    } finally {
      redis.gatehouseSlidingWindow = script;
    }
  });

  it('keeps one compact key per environment, hash-tagged by environment, that expires', async () => {
    const [store] = stores();
    now = T0;
    await store!.hit('env_layout', 10);
    const key = rateLimitKey(prefix, 'env_layout');
    expect(key).toBe(`${prefix}rl:{env_layout}`);
    const redis = clients[0]!;
    // Header, then 601 u32 counts and 601 u16 last-admission offsets.
    expect(await redis.strlen(key)).toBeLessThanOrEqual(20 + 6 * 601);
    expect(await redis.pttl(key)).toBeGreaterThan(60_000);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(61_100);
  });
});
