import { testEnvironmentId } from '../helpers/ids.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, type ServerNode } from '../helpers/nodes.js';
import { deletePrefix, REDIS_URL } from '../helpers/redis.js';
import { testDb } from '../helpers/store.js';

const runs = testDb() === 'postgres' && REDIS_URL !== undefined;
const why =
  testDb() !== 'postgres'
    ? '(skipped: runs in the PostgreSQL project; SQLite is one file for one node)'
    : REDIS_URL
      ? '(two processes)'
      : '(skipped: REDIS_URL unset)';

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
    const created = (await res.json()) as Created;
    // These tests sign up with a password and use the session at once: no emailed code.
    for (const environment of created.environments) {
      const off = await node.fetch(`/v1/platform/environments/${environment.id}`, {
        method: 'PATCH',
        credential: cluster.platformKey,
        body: JSON.stringify({ emailVerification: 'off' }),
      });
      expect(off.status).toBe(200);
    }
    return created;
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

  /** One JSON call: the status and the parsed body (or null). */
  async function call(node: ServerNode, method: string, pathname: string, credential: string, body?: unknown) {
    const res = await node.fetch(pathname, { method, credential, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  }
  const errorCode = (r: { body: { error?: { code?: string } } | null }) => r.body?.error?.code;

  interface Signed {
    userId: string;
    accessToken: string;
    refreshToken: string;
  }
  async function signUp(node: ServerNode, env: Created['environments'][number], tag: string): Promise<Signed> {
    const res = await call(node, 'POST', '/v1/auth/signup', env.publishableKey, {
      email: `${tag}.${Date.now().toString(36)}@nodes.test`,
      password: 'correct horse battery staple',
    });
    expect(res.status, res.text).toBe(201);
    return { userId: res.body.user.id, ...res.body.session };
  }

  it('stops a secret key revoked on one node on the other within 1 s', async () => {
    const env = dev(await createProject(a, 'Revoke'));
    const created = await call(a, 'POST', `/v1/platform/environments/${env.id}/secret-keys`, cluster.platformKey);
    expect(created.status, created.text).toBe(201);
    const { id: keyId, secretKey } = created.body as { id: string; secretKey: string };
    // Used on B first, so B has it cached (30 s while invalidations arrive).
    expect((await call(b, 'GET', '/v1/users?limit=1', secretKey)).status).toBe(200);

    const revoked = await call(a, 'DELETE', `/v1/platform/environments/${env.id}/secret-keys/${keyId}`, cluster.platformKey);
    expect(revoked.status, revoked.text).toBe(204);
    const deadline = Date.now() + 1000;
    let onB = await call(b, 'GET', '/v1/users?limit=1', secretKey);
    while (onB.status === 200 && Date.now() < deadline) onB = await call(b, 'GET', '/v1/users?limit=1', secretKey);
    expect(onB.status, onB.text).toBe(401);
    expect(errorCode(onB)).toBe('unauthenticated');
    // Only that key: the environment's other secret key still works on B.
    expect((await call(b, 'GET', '/v1/users?limit=1', env.secretKey)).status).toBe(200);
  });

  // These two run side by side: the first waits out the 10 s refresh grace window.
  it.concurrent('refreshes on one node a session signed in on the other; reuse after the grace window revokes it', async () => {
    const env = dev(await createProject(a, 'Sessions'));
    const first = await signUp(a, env, 'refresh');

    const sentAt = Date.now();
    const refreshed = await call(b, 'POST', '/v1/auth/refresh', env.publishableKey, { refreshToken: first.refreshToken });
    const rotatedBy = Date.now();
    expect(refreshed.status, refreshed.text).toBe(200);
    const second = refreshed.body.session as Signed;
    expect(second.refreshToken).not.toBe(first.refreshToken);
    // The token B signed verifies on A, and names the same user.
    const me = await call(a, 'GET', '/v1/me', second.accessToken);
    expect(me.status, me.text).toBe(200);
    expect(me.body.user.id).toBe(first.userId);

    // Inside the grace window, the old token on A yields the successor B issued (racing tabs converge).
    const racing = await call(a, 'POST', '/v1/auth/refresh', env.publishableKey, { refreshToken: first.refreshToken });
    if (Date.now() - sentAt <= 10_000) {
      expect(racing.status, racing.text).toBe(200);
      expect(racing.body.session.refreshToken).toBe(second.refreshToken);
    }

    // After the window (the rotation happened before `rotatedBy`), the old token is reuse.
    await new Promise((r) => setTimeout(r, rotatedBy + 10_250 - Date.now()));
    const reused = await call(b, 'POST', '/v1/auth/refresh', env.publishableKey, { refreshToken: first.refreshToken });
    expect(reused.status, reused.text).toBe(401);
    expect(errorCode(reused)).toBe('session_revoked');
    // The whole session is gone, on both nodes: its current refresh token and its access token.
    const current = await call(a, 'POST', '/v1/auth/refresh', env.publishableKey, { refreshToken: second.refreshToken });
    expect(errorCode(current), current.text).toBe('session_revoked');
    const meAfter = await call(a, 'GET', '/v1/me', second.accessToken);
    expect(errorCode(meAfter), meAfter.text).toBe('session_revoked');
  });

  it.concurrent('enforces an organization change made on one node on the other at once', async () => {
    const env = dev(await createProject(a, 'Organizations'));
    const admin = await signUp(a, env, 'admin');
    const newUser = async (tag: string) => {
      const res = await call(b, 'POST', '/v1/users', env.secretKey, { email: `${tag}.${Date.now().toString(36)}@nodes.test` });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const ownerId = await newUser('owner');
    const memberId = await newUser('member');
    const org = await call(a, 'POST', '/v1/organizations', env.secretKey, { name: 'Nodes', ownerId });
    expect(org.status, org.text).toBe(201);
    const orgId = org.body.id as string;
    for (const [userId, role] of [
      [admin.userId, 'admin'],
      [memberId, 'member'],
    ]) {
      const added = await call(b, 'POST', `/v1/organizations/${orgId}/members`, env.secretKey, { userId, role });
      expect(added.status, added.text).toBe(201);
    }
    const switched = await call(b, 'POST', '/v1/auth/switch-organization', env.publishableKey, {
      refreshToken: admin.refreshToken,
      organizationId: orgId,
    });
    expect(switched.status, switched.text).toBe(200);
    const token = switched.body.session.accessToken as string; // its claims say admin, and stay so

    // While an admin on A's record, the admin manages members on B.
    const promote = await call(b, 'PATCH', `/v1/me/organization/members/${memberId}`, token, { role: 'admin' });
    expect(promote.status, promote.text).toBe(200);

    // Demoted on A: the very next member-management call on B is refused.
    const demoted = await call(a, 'PATCH', `/v1/organizations/${orgId}/members/${admin.userId}`, env.secretKey, { role: 'member' });
    expect(demoted.status, demoted.text).toBe(200);
    const refused = await call(b, 'PATCH', `/v1/me/organization/members/${memberId}`, token, { role: 'member' });
    expect(refused.status, refused.text).toBe(403);
    expect(errorCode(refused)).toBe('forbidden');
    const mine = await call(b, 'GET', '/v1/me/organization', token);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.role).toBe('member');

    // Removed on A: B refuses their organization at once.
    const removed = await call(a, 'DELETE', `/v1/organizations/${orgId}/members/${admin.userId}`, env.secretKey);
    expect(removed.status, removed.text).toBe(200);
    const gone = await call(b, 'GET', '/v1/me/organization', token);
    expect(gone.status, gone.text).toBe(403);
    expect(gone.body.error.message).toMatch(/no longer a member/);
  });

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
      .where('environment_id', 'in', environmentIds.map(testEnvironmentId))
      .execute();
    expect(new Set(keys.map((k) => k.environment_id)).size).toBe(environmentIds.length);
    // The surviving node serves what the dead one acknowledged.
    const fromA = acknowledged.find((p) => p.node === 'A')!;
    const res = await b.fetch('/v1/environment', { credential: dev(fromA).publishableKey });
    expect(res.status).toBe(200);
  }, 60_000);
});
