import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, me, signIn, signUp } from '../helpers/identity.js';
import { QuietingProxy } from '../helpers/quieting-proxy.js';
import { deletePrefix, hasRedisServer, PrivateRedis, REDIS_SUITE, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { startRelayedNodes, type RelayedNodes } from '../helpers/relay.js';
import { openSharedTestStores, testDb } from '../helpers/store.js';
import { within } from '../helpers/wait.js';

const redisServer = hasRedisServer();

const common = () => ({ platformKey: newSecret('plk_'), instanceSecret: newSecret('', 48) });

/** Revokes the user's sessions through node `on` and expects node `elsewhere` to refuse the token on the very next request. */
async function expectRevocationRefusedAtOnce(on: TestApp, elsewhere: TestApp, user: { userId: string; accessToken: string }) {
  const revoked = await on.call({
    method: 'POST',
    url: `/v1/users/${user.userId}/sessions/revoke`,
    credential: on.project.development.secretKey,
  });
  expect(revoked.statusCode).toBe(200);
  expect(json(await me(elsewhere, user.accessToken)).error.code).toBe('session_revoked');
}

describe.skipIf(!REDIS_URL)(`session cache across nodes ${REDIS_SUITE}`, () => {
  let nodes: RelayedNodes;
  let a: TestApp;
  let b: TestApp;
  let deaf: TestApp;
  beforeAll(async () => {
    nodes = await startRelayedNodes(common());
    ({ a, b, deaf } = nodes);
  });
  afterAll(() => nodes?.close());

  it('a session signed out on one node is refused by the others as soon as the change arrives', async () => {
    const user = await signUp(a);
    const other = json(await signIn(a, user.email, GOOD_PASSWORD)).session;
    for (const node of [a, b, deaf]) {
      for (let i = 0; i < 2; i++) expect((await me(node, other.accessToken)).statusCode).toBe(200);
    }
    const signout = await a.call({
      method: 'POST',
      url: '/v1/auth/signout',
      credential: a.project.development.publishableKey,
      payload: { refreshToken: other.refreshToken },
    });
    expect(signout.statusCode).toBe(204);
    expect(json(await me(a, other.accessToken)).error.code).toBe('session_revoked');
    await within(1000, async () => (await me(b, other.accessToken)).statusCode === 401);
    // The node that missed the announcement still serves its cached copy: B heard it through Redis.
    expect((await me(deaf, other.accessToken)).statusCode).toBe(200);
  });

  it('forgets everything cached when an announcement cannot be read', async () => {
    const user = await signUp(a);
    for (let i = 0; i < 2; i++) expect((await me(b, user.accessToken)).statusCode).toBe(200);
    // A write no node announced: B keeps serving its copy ...
    await sql`update users set first_name = 'Unannounced' where id = ${user.userId}`.execute(a.store.db);
    expect(json(await me(b, user.accessToken)).user.firstName).toBeNull();
    // ... until something it cannot read arrives on the channel.
    const publisher = new Redis(REDIS_URL!);
    await publisher.publish(`${nodes.prefix}changes`, 'not a change');
    await publisher.quit();
    await within(1000, async () => json(await me(b, user.accessToken)).user.firstName === 'Unannounced');
  });

  it('a profile changed on one node shows on the others as soon as the change arrives', async () => {
    const user = await signUp(a);
    for (let i = 0; i < 2; i++) expect((await me(b, user.accessToken)).statusCode).toBe(200);
    await a.call({ method: 'PATCH', url: '/v1/me', credential: user.accessToken, payload: { firstName: 'Relayed' } });
    await within(1000, async () => json(await me(b, user.accessToken)).user.firstName === 'Relayed');
  });
});

describe.skipIf(!REDIS_URL)(`a node whose Redis subscriber goes quiet without closing ${REDIS_SUITE}`, () => {
  it('stops serving cached sessions after three unanswered heartbeats, and caches again once it hears', async () => {
    const proxy = await QuietingProxy.start(REDIS_URL!);
    const prefix = testPrefix();
    const [first, second] = await openSharedTestStores(2);
    const options = common();
    const a = await startTestApp({ ...options, store: first!, redis: { url: REDIS_URL!, prefix } });
    const b = await startTestApp({ ...options, store: second!, redis: { url: proxy.url, prefix, heartbeatMs: 250 } });
    const user = await signUp(a);
    let writes = 0;
    /** Changes the row behind B's back (nobody announces it) and says whether B still shows the old one. */
    const bServesItsCopy = async () => {
      const before = json(await me(b, user.accessToken)).user.firstName;
      await sql`update users set first_name = ${`Unannounced ${++writes}`} where id = ${user.userId}`.execute(a.store.db);
      return json(await me(b, user.accessToken)).user.firstName === before;
    };
    try {
      expect(await bServesItsCopy()).toBe(true); // a trusting node serves its cached copy

      // Nothing closes and nothing errs: only B's own heartbeats stop coming back. The TTL is 10 s.
      expect(proxy.quietSubscribers()).toBe(1);
      await within(3000, async () => !(await bServesItsCopy()));

      // The subscriber reconnects (a new connection, which the proxy passes through); B caches
      // again once its heartbeat comes back through it.
      await within(5000, () => bServesItsCopy());
      expect(json(await b.call({ method: 'GET', url: '/v1/health' })).redis).toBe('ok');
    } finally {
      await b.close();
      await a.close();
      await proxy.close();
      const redis = new Redis(REDIS_URL!);
      await deletePrefix(redis, prefix);
      await redis.quit();
    }
  });
});

describe.skipIf(testDb() !== 'postgres')(
  `session cache, PostgreSQL nodes without Redis ${testDb() === 'postgres' ? '' : '(skipped: PostgreSQL only; a SQLite store has one node)'}`,
  () => {
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      const [first, second] = await openSharedTestStores(2);
      const shared = common();
      a = await startTestApp({ ...shared, store: first! });
      b = await startTestApp({ ...shared, store: second! });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    it('caches nothing, so a session revoked on one node is refused by the other at once', async () => {
      const user = await signUp(a);
      for (let i = 0; i < 2; i++) expect((await me(b, user.accessToken)).statusCode).toBe(200);
      await expectRevocationRefusedAtOnce(a, b, user);
    });
  },
);

describe.skipIf(!redisServer)(
  `session cache when Redis goes away ${redisServer ? '(private redis-server)' : '(skipped: no redis-server binary)'}`,
  () => {
    let redis: PrivateRedis;
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      redis = await PrivateRedis.start();
      const [first, second] = await openSharedTestStores(2);
      const shared = { ...common(), redis: { url: redis.url, prefix: testPrefix(), commandTimeoutMs: 500 } };
      a = await startTestApp({ ...shared, store: first! });
      b = await startTestApp({ ...shared, store: second! });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await redis?.kill();
    });

    it('stops caching, so a revocation whose announcement cannot travel is still refused at once', async () => {
      const user = await signUp(a);
      for (let i = 0; i < 2; i++) expect((await me(b, user.accessToken)).statusCode).toBe(200);
      await redis.kill();
      await within(5000, async () => (await b.call({ method: 'GET', url: '/v1/health' })).json().redis === 'degraded');
      await within(5000, async () => (await a.call({ method: 'GET', url: '/v1/health' })).json().redis === 'degraded');
      // Requests while Redis is away must not fill the cache either.
      for (let i = 0; i < 2; i++) expect((await me(b, user.accessToken)).statusCode).toBe(200);
      await expectRevocationRefusedAtOnce(a, b, user);
    });
  },
);
