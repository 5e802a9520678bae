import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REDIS_SUITE, REDIS_URL } from '../helpers/redis.js';
import { startRelayedNodes, type RelayedNodes } from '../helpers/relay.js';
import { within } from '../helpers/wait.js';
import { probeRoutes } from './probe.js';

describe('credential cache, one node', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ routes: probeRoutes, cache: { ttlMs: 600_000 } });
  });
  afterAll(() => t.close());

  it('drops a revoked key and a changed setting at once', async () => {
    const env = t.project.development;
    const sk = await t.call({ method: 'POST', url: `/v1/platform/environments/${env.id}/secret-keys`, credential: t.platformKey });
    const { id, secretKey } = sk.json();
    const probe = () => t.call({ method: 'POST', url: '/v1/test/probe', credential: secretKey, payload: { outcome: 'ok' } });
    expect((await probe()).statusCode).toBe(200);
    expect((await probe()).statusCode).toBe(200);
    expect(
      (await t.call({ method: 'DELETE', url: `/v1/platform/environments/${env.id}/secret-keys/${id}`, credential: t.platformKey }))
        .statusCode,
    ).toBe(204);
    expect((await probe()).statusCode).toBe(401);

    const read = () => t.call({ method: 'GET', url: '/v1/environment', credential: env.publishableKey });
    expect((await read()).json().signUp).toBe(true);
    await t.call({ method: 'PATCH', url: `/v1/platform/environments/${env.id}`, credential: t.platformKey, payload: { signUp: false } });
    expect((await read()).json().signUp).toBe(false);
  });
});

describe.skipIf(!REDIS_URL)(`credential cache across nodes ${REDIS_SUITE}`, () => {
  const platformKey = newSecret('plk_');
  const instanceSecret = newSecret('', 48);
  let nodes: RelayedNodes;
  let a: TestApp;
  let b: TestApp;
  let deaf: TestApp;
  beforeAll(async () => {
    nodes = await startRelayedNodes({ platformKey, instanceSecret, routes: probeRoutes, cache: { ttlMs: 600_000 } });
    ({ a, b, deaf } = nodes);
  });
  afterAll(() => nodes?.close());

  it('a key revoked on one node stops working on the others within 1 s', async () => {
    const env = a.project.development;
    const { id, secretKey } = (
      await a.call({ method: 'POST', url: `/v1/platform/environments/${env.id}/secret-keys`, credential: platformKey })
    ).json();
    const probe = (node: TestApp) =>
      node.call({ method: 'POST', url: '/v1/test/probe', credential: secretKey, payload: { outcome: 'ok' } });
    // Warm every node's cache.
    for (const node of [a, b, deaf]) expect((await probe(node)).statusCode).toBe(200);

    const revoked = await a.call({
      method: 'DELETE',
      url: `/v1/platform/environments/${env.id}/secret-keys/${id}`,
      credential: platformKey,
    });
    expect(revoked.statusCode).toBe(204);
    expect((await probe(a)).statusCode).toBe(401);
    await within(1000, async () => (await probe(b)).statusCode === 401);
    // The node that missed the message still trusts its cache: what B got came from Redis.
    expect((await probe(deaf)).statusCode).toBe(200);
  });

  it('a changed setting applies on the other nodes within 1 s, rate limit included', async () => {
    const env = a.project.development;
    const read = (node: TestApp) => node.call({ method: 'GET', url: '/v1/environment', credential: env.publishableKey });
    for (const node of [a, b, deaf]) expect((await read(node)).headers['x-ratelimit-limit']).toBe('1000');

    const patched = await a.call({
      method: 'PATCH',
      url: `/v1/platform/environments/${env.id}`,
      credential: platformKey,
      payload: { rateLimitPerMinute: 5000 },
    });
    expect(patched.statusCode).toBe(200);
    await within(1000, async () => {
      const res = await read(b);
      return res.headers['x-ratelimit-limit'] === '5000' && res.json().rateLimit.requestsPerMinute === 5000;
    });
    expect((await read(deaf)).headers['x-ratelimit-limit']).toBe('1000');
  });
});
