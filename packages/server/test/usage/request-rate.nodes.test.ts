import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { deletePrefix, REDIS_SUITE, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { openSharedTestStores, testDb } from '../helpers/store.js';

/** The console's requests-per-minute chart counts every node, not only the one that answers it. */
describe.skipIf(!REDIS_URL)(`request counters across nodes (${testDb()}) ${REDIS_SUITE}`, () => {
  const prefix = testPrefix();
  let a: TestApp;
  let b: TestApp;
  let alone: TestApp;
  beforeAll(async () => {
    const [first, second, third] = await openSharedTestStores(3);
    const common = { platformKey: newSecret('plk_'), instanceSecret: newSecret('', 48) };
    a = await startTestApp({ ...common, store: first!, redis: { url: REDIS_URL!, prefix } });
    b = await startTestApp({ ...common, store: second!, redis: { url: REDIS_URL!, prefix } });
    // The control: same database, no Redis, so it counts only what it answered itself.
    alone = await startTestApp({ ...common, store: third! });
  });
  afterAll(async () => {
    await alone?.close();
    await b?.close();
    await a?.close();
    const redis = new Redis(REDIS_URL!);
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  const hit = (node: TestApp) => node.call({ method: 'GET', url: '/v1/environment', credential: a.project.development.publishableKey });
  const chart = async (node: TestApp) => {
    const answer = json(await node.call({ method: 'GET', url: `/v1/platform/projects/${a.project.id}/requests`, credential: node.platformKey }));
    const development = answer.environments.find((e: { id: string }) => e.id === a.project.development.id);
    return development.perMinute.reduce((sum: number, m: { requests: number }) => sum + m.requests, 0) as number;
  };

  it('two nodes on one Redis: each node reads the requests both answered', async () => {
    for (let i = 0; i < 3; i++) expect((await hit(a)).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await hit(b)).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await hit(alone)).statusCode).toBe(200);
    // A node adds its counts every few seconds; the test sends them now instead of waiting.
    await b.app.requestRate.flush();
    expect(await chart(a)).toBe(8);
    await a.app.requestRate.flush();
    expect(await chart(b)).toBe(8);
    expect(await chart(alone)).toBe(2);
  });
});
