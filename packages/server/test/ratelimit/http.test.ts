import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REDIS_URL, testPrefix } from '../helpers/redis.js';
import { T0 } from '../helpers/window.js';
import { probeRoutes, uncountedRoute } from './probe.js';

const stores = [
  ['memory store', false],
  [REDIS_URL ? 'Redis store' : 'Redis store (skipped: REDIS_URL unset)', true],
] as const;

function limitHeaders(res: LightMyRequestResponse) {
  return {
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
    reset: res.headers['x-ratelimit-reset'],
  };
}

describe.each(stores)('rate limit over HTTP, %s', (_name, useRedis) => {
  if (useRedis && !REDIS_URL) {
    it.skip('needs REDIS_URL');
    return;
  }
  let t: TestApp;
  let now = T0;
  const prefix = testPrefix();

  beforeEach(async () => {
    now = T0;
    t = await startTestApp({
      rateLimit: { clock: () => now, redisUsesClock: true },
      ...(useRedis ? { redis: { url: REDIS_URL!, prefix } } : {}),
      routes: (app) => {
        probeRoutes(app);
        uncountedRoute(app);
      },
    });
  });
  afterEach(() => t.close());
  afterAll(async () => {
    if (!useRedis) return;
    const { Redis } = await import('ioredis');
    const { deletePrefix } = await import('../helpers/redis.js');
    const redis = new Redis(REDIS_URL!);
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  const env = () => t.project.development;
  const probe = (outcome: unknown, credential = env().publishableKey) =>
    t.call({ method: 'POST', url: '/v1/test/probe', credential, payload: { outcome } });

  it('sends the limit, what is left and when a request is next free on a success', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/environment', credential: env().publishableKey });
    expect(res.statusCode).toBe(200);
    expect(limitHeaders(res)).toEqual({ limit: '1000', remaining: '999', reset: String(T0 / 1000) });
    expect(res.json().rateLimit.requestsPerMinute).toBe(1000);

    const prod = await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.production.publishableKey });
    expect(limitHeaders(prod)).toMatchObject({ limit: '6000', remaining: '5999' });

    await t.setSettings(env().id, { rateLimitPerMinute: 25 });
    const overridden = await t.call({ method: 'GET', url: '/v1/environment', credential: env().publishableKey });
    expect(limitHeaders(overridden)).toMatchObject({ limit: '25', remaining: '23' });
  });

  it('sends them, and counts the request, on errors raised after the limiter', async () => {
    const invalid = await probe(42);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.code).toBe('invalid_request');
    expect(limitHeaders(invalid)).toEqual({ limit: '1000', remaining: '999', reset: String(T0 / 1000) });

    const missing = await probe('missing', env().secretKey);
    expect(missing.statusCode).toBe(404);
    expect(limitHeaders(missing)).toMatchObject({ limit: '1000', remaining: '998' });

    const ok = await probe('ok');
    expect(ok.statusCode).toBe(200);
    expect(limitHeaders(ok)).toMatchObject({ remaining: '997' });
  });

  it('refuses with 429 rate_limited, the message of the design, and Retry-After', async () => {
    await t.setSettings(env().id, { rateLimitPerMinute: 3 });
    for (let i = 0; i < 2; i++) expect((await probe('ok')).statusCode).toBe(200);
    const last = await probe('ok');
    expect(last.statusCode).toBe(200);
    // The third request fills the window: the first frees 60 s after it, at T0 + 60 s.
    expect(limitHeaders(last)).toEqual({ limit: '3', remaining: '0', reset: String((T0 + 60_000) / 1000) });

    now = T0 + 30_000;
    const refused = await t.call({ method: 'GET', url: '/v1/environment', credential: env().publishableKey });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: {
        code: 'rate_limited',
        message: `Environment ${env().id} is over its limit of 3 requests per minute; retry in 30 seconds.`,
      },
    });
    expect(refused.headers['retry-after']).toBe('30');
    expect(limitHeaders(refused)).toEqual({ limit: '3', remaining: '0', reset: String((T0 + 60_000) / 1000) });
    expect(refused.headers['content-type']).toMatch(/application\/json/);

    // The limiter refuses before validation: a bad body is still a 429.
    expect((await probe(42)).statusCode).toBe(429);
  });

  it('never sends Retry-After above 60, even when the window filled within one 100 ms bucket', async () => {
    await t.setSettings(env().id, { rateLimitPerMinute: 3 });
    for (const at of [0, 20, 50]) {
      now = T0 + at;
      expect((await probe('ok')).statusCode).toBe(200);
    }
    for (const at of [50, 60, 99]) {
      now = T0 + at;
      const refused = await probe('ok');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after']), `at ${at} ms`).toBeLessThanOrEqual(60);
      expect(refused.json().error.message).toContain('retry in 60 seconds');
    }
    // And waiting that long is enough: the three are free 60 s after the last of them.
    now = T0 + 50 + 60_000;
    expect((await probe('ok')).statusCode).toBe(200);
  });

  it('does not count refusals: capacity comes back when the admitted requests leave', async () => {
    await t.setSettings(env().id, { rateLimitPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await probe('ok')).statusCode).toBe(200);
    now = T0 + 30_000;
    for (let i = 0; i < 20; i++) expect((await probe('ok')).statusCode).toBe(429);
    now = T0 + 59_999;
    expect((await probe('ok')).statusCode).toBe(429);
    // Had the refusals at 30 s been counted, nothing would be free before 90 s.
    now = T0 + 60_000;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await probe('ok')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('does not count public routes, platform requests or refused credentials, and sends them no headers', async () => {
    await t.setSettings(env().id, { rateLimitPerMinute: 2 });
    const health = await t.call({ method: 'GET', url: '/v1/health' });
    const platform = await t.call({ method: 'GET', url: `/v1/platform/environments/${env().id}`, credential: t.platformKey });
    const unknown = await t.call({ method: 'GET', url: '/v1/environment', credential: 'pk_test_unknown' });
    const badOrigin = await t.call({
      method: 'GET',
      url: '/v1/environment',
      credential: env().publishableKey,
      headers: { origin: 'https://evil.test' },
    });
    const secretFromBrowser = await probe('ok', env().secretKey).then(() =>
      t.call({
        method: 'POST',
        url: '/v1/test/probe',
        credential: env().secretKey,
        headers: { origin: 'https://example.test' },
        payload: { outcome: 'ok' },
      }),
    );
    const optedOut = await t.call({ method: 'GET', url: '/v1/test/uncounted', credential: env().publishableKey });
    expect([health, platform, unknown, badOrigin, secretFromBrowser, optedOut].map((r) => r.statusCode)).toEqual([
      200, 200, 401, 403, 403, 200,
    ]);
    for (const res of [health, platform, unknown, badOrigin, secretFromBrowser, optedOut]) {
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    // Only the one accepted probe above was counted.
    const next = await t.call({ method: 'GET', url: '/v1/environment', credential: env().publishableKey });
    expect(limitHeaders(next)).toMatchObject({ limit: '2', remaining: '0' });
  });
});
