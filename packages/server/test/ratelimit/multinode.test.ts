import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, type ServerNode } from '../helpers/nodes.js';
import { deletePrefix, REDIS_URL } from '../helpers/redis.js';
import { testDb } from '../helpers/store.js';

const runs = testDb() === 'postgres' && REDIS_URL !== undefined;
const why =
  testDb() !== 'postgres' ? '(skipped: runs in the PostgreSQL project)' : REDIS_URL ? '(two processes)' : '(skipped: REDIS_URL unset)';

interface Created {
  id: string;
  environments: { id: string; type: string; publishableKey: string; secretKey: string }[];
}

describe.skipIf(!runs)(`two server processes on one PostgreSQL and one Redis ${why}`, () => {
  let cluster: Cluster;
  let a: ServerNode;
  let b: ServerNode;

  beforeAll(async () => {
    cluster = new Cluster(process.env.DATABASE_URL!, REDIS_URL!);
    [a, b] = (await cluster.start(2)) as [ServerNode, ServerNode];
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
    const redis = new Redis(REDIS_URL!);
    await deletePrefix(redis, cluster.redisPrefix);
    await redis.quit();
  }, 30_000);

  async function createProject(node: ServerNode, name: string): Promise<Created> {
    const res = await node.fetch('/v1/platform/projects', {
      method: 'POST',
      credential: cluster.platformKey,
      body: JSON.stringify({ name, domain: 'nodes.test' }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Created;
  }

  const dev = (p: Created) => p.environments.find((e) => e.type === 'development')!;

  it('holds a burst split across both nodes to the one global limit', async () => {
    const env = dev(await createProject(a, 'Burst'));
    const patch = await b.fetch(`/v1/platform/environments/${env.id}`, {
      method: 'PATCH',
      credential: cluster.platformKey,
      body: JSON.stringify({ rateLimitPerMinute: 40 }),
    });
    expect(patch.status).toBe(200);
    // B spends 25 of the 40 on its own; then a burst split across A and B gets exactly the rest.
    const first = await Promise.all(Array.from({ length: 25 }, () => b.fetch('/v1/environment', { credential: env.publishableKey })));
    expect(first.map((r) => r.status)).toEqual(Array(25).fill(200));
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).fetch('/v1/environment', { credential: env.publishableKey })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(15);
    expect(statuses.filter((s) => s === 429)).toHaveLength(85);
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('40');
  });

  it('applies a setting changed on one node on the other within 1 s', async () => {
    const env = dev(await createProject(a, 'Settings'));
    const read = async () => (await b.fetch('/v1/environment', { credential: env.publishableKey })).json() as Promise<{ signUp: boolean }>;
    expect((await read()).signUp).toBe(true); // now cached on B
    const patch = await a.fetch(`/v1/platform/environments/${env.id}`, {
      method: 'PATCH',
      credential: cluster.platformKey,
      body: JSON.stringify({ signUp: false }),
    });
    expect(patch.status).toBe(200);
    const deadline = Date.now() + 1000;
    let signUp = true;
    while (signUp && Date.now() < deadline) signUp = (await read()).signUp;
    expect(signUp).toBe(false);
  });

  it.todo('a secret key revoked on A stops working on B within 1 s (needs a secret-key route, e.g. GET /v1/users from issue 3)');
  it.todo('a session signed in on A refreshes on B (needs sign-in and refresh, issue 3)');
  it.todo('an organization change on A is enforced on B at once (needs organizations, issue 4)');

  it('loses no acknowledged write when a node is SIGKILLed mid-traffic', async () => {
    const acknowledged: (Created & { node: string })[] = [];
    let stop = false;
    const writer = async (node: ServerNode, n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await node.fetch('/v1/platform/projects', {
            method: 'POST',
            credential: cluster.platformKey,
            body: JSON.stringify({ name: `kill-${node.name}-${n}-${i}` }),
          });
          if (res.status === 201) acknowledged.push({ ...((await res.json()) as Created), node: node.name });
        } catch {
          // The connection died with node A: not acknowledged, so nothing is owed.
          if (node === a) return;
        }
      }
    };
    const writers = [writer(a, 1), writer(a, 2), writer(b, 1)];
    while (acknowledged.filter((p) => p.node === 'A').length < 10) await new Promise((r) => setTimeout(r, 10));
    await a.kill('SIGKILL');
    const atKill = acknowledged.length;
    while (acknowledged.length < atKill + 5) await new Promise((r) => setTimeout(r, 10));
    stop = true;
    await Promise.all(writers);

    const ids = acknowledged.map((p) => p.id);
    const projects = await cluster.db().selectFrom('projects').select('id').where('id', 'in', ids).execute();
    expect(projects.map((p) => p.id).sort()).toEqual([...ids].sort());
    const environmentIds = acknowledged.flatMap((p) => p.environments.map((e) => e.id));
    const keys = await cluster
      .db()
      .selectFrom('secret_keys')
      .select('environment_id')
      .where('environment_id', 'in', environmentIds)
      .execute();
    expect(new Set(keys.map((k) => k.environment_id)).size).toBe(environmentIds.length);
    // The surviving node serves what the dead one acknowledged.
    const fromA = acknowledged.find((p) => p.node === 'A')!;
    const res = await b.fetch('/v1/environment', { credential: dev(fromA).publishableKey });
    expect(res.status).toBe(200);
  }, 60_000);
});
