import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitKey } from '../../src/ratelimit/redis.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { hasRedisServer, PrivateRedis, testPrefix } from '../helpers/redis.js';

const available = hasRedisServer();

describe.skipIf(!available)(`Redis failure policy ${available ? '(private redis-server)' : '(skipped: no redis-server binary)'}`, () => {
  let redis: PrivateRedis;
  let t: TestApp;
  const logs: { level: number; msg: string }[] = [];
  const prefix = testPrefix();

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await startTestApp({
      redis: { url: redis.url, prefix, commandTimeoutMs: 500 },
      logger: { level: 'info', stream: { write: (line: string) => void logs.push(JSON.parse(line)) } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await redis?.kill();
  });

  const health = async () => (await t.call({ method: 'GET', url: '/v1/health' })).json();
  const get = (credential = t.project.development.publishableKey) => t.call({ method: 'GET', url: '/v1/environment', credential });
  const unreachable = () => logs.filter((l) => l.msg.startsWith('Redis is unreachable'));

  it('falls back to the per-node window when Redis dies mid-traffic, reports degraded, and recovers', async () => {
    expect(await health()).toEqual({ status: 'ok', database: 'ok', redis: 'ok' });
    const env = t.project.development;
    const key = rateLimitKey(prefix, env.id);
    const probe = new Redis(redis.url);
    await get();
    expect(await probe.exists(key)).toBe(1);
    probe.disconnect();

    // Four clients in a loop; Redis is killed while they run.
    const statuses: number[] = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        const res = await get();
        statuses.push(res.statusCode);
        if (res.headers['x-ratelimit-limit'] !== '1000') throw new Error(`missing headers: ${JSON.stringify(res.headers)}`);
        // Injected requests served from memory never touch I/O: let timers run.
        await new Promise((r) => setImmediate(r));
      }
    };
    const clients = Array.from({ length: 4 }, client);
    while (statuses.length < 40) await new Promise((r) => setTimeout(r, 5));
    await redis.kill();
    const killedAt = statuses.length;
    while (statuses.length < killedAt + 200) await new Promise((r) => setTimeout(r, 5));
    stop = true;
    await Promise.all(clients);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    expect(await health()).toEqual({ status: 'degraded', database: 'ok', redis: 'degraded' });
    expect(unreachable()).toHaveLength(1);
    expect(unreachable()[0]!.level).toBe(40);

    // The per-node window enforces the limit meanwhile.
    const other = await t.createProject('Fallback', 'fallback.test');
    await t.setSettings(other.development.id, { rateLimitPerMinute: 3 });
    const fallback = [];
    for (let i = 0; i < 4; i++) fallback.push((await get(other.development.publishableKey)).statusCode);
    expect(fallback).toEqual([200, 200, 200, 429]);

    // Back: a fresh redis-server (no scripts loaded, so EVALSHA falls back to EVAL).
    await redis.start();
    for (let i = 0; i < 100 && (await health()).redis !== 'ok'; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await health()).toEqual({ status: 'ok', database: 'ok', redis: 'ok' });
    expect(logs.filter((l) => l.msg.startsWith('Redis is reachable again'))).toHaveLength(1);
    const res = await get();
    expect(res.statusCode).toBe(200);
    const after = new Redis(redis.url);
    expect(await after.exists(key)).toBe(1);
    after.disconnect();
    expect(unreachable()).toHaveLength(1);
  });
});
