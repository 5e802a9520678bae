import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatehouseClient, GatehouseApiError, GatehouseNetworkError, type GatehouseClient, type User } from '../src/index.js';
import { startGatehouse, uniqueEmail, type Gatehouse } from './helpers/gatehouse.js';

async function apiError(promise: PromiseLike<unknown>): Promise<GatehouseApiError> {
  const error = await Promise.resolve(promise).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatehouseApiError);
  return error as GatehouseApiError;
}

describe('the admin client against a running Gatehouse', () => {
  let gh: Gatehouse;
  let client: GatehouseClient;
  beforeAll(async () => {
    gh = await startGatehouse();
    const environment = await gh.newEnvironment();
    client = createGatehouseClient({ secretKey: environment.secretKey, baseUrl: gh.baseUrl });
  });
  afterAll(() => gh.close());

  it('users: create, read, change, search, revoke sessions and delete', async () => {
    const email = uniqueEmail('admin');
    const created = await client.users.create({ email, firstName: 'Ada' });
    expect(created).toMatchObject({ email, firstName: 'Ada', passwordEnabled: false });
    expect((await client.users.get(created.id)).id).toBe(created.id);
    expect((await client.users.update(created.id, { lastName: 'Lovelace' })).lastName).toBe('Lovelace');
    expect((await client.users.list({ email })).data.map((u) => u.id)).toEqual([created.id]);
    expect(await client.users.revokeSessions(created.id)).toEqual({ revoked: 0 });
    expect(await client.users.delete(created.id)).toEqual({ id: created.id, deleted: true });
    const gone = await apiError(client.users.get(created.id));
    expect(gone).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('users.importUsers: per-row results, bcrypt digests sign in, a repeated externalId answers the same user', async () => {
    const tag = `import${Date.now()}`;
    // bcrypt of "rasmuslerdorf" as PHP's password_hash made it (the PHP manual's example).
    const digest = '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a';
    const users = [
      { email: uniqueEmail(tag), externalId: `${tag}_a`, passwordDigest: digest, passwordHasher: 'bcrypt' as const },
      { email: 'nope', externalId: `${tag}_b` },
    ];
    const first = await client.users.importUsers({ users });
    expect(first.data[0]).toMatchObject({ index: 0, created: true, user: { externalId: `${tag}_a`, passwordEnabled: true } });
    expect(first.data[1]).toMatchObject({ index: 1, error: { code: 'invalid_request' } });
    const again = await client.users.importUsers({ users: users.slice(0, 1) });
    const row = again.data[0]!;
    expect('user' in row && row.created === false && row.user.id === (first.data[0] as { user: User }).user.id).toBe(true);
    const tooMany = await apiError(client.users.importUsers({ users: Array.from({ length: 1001 }, () => ({ email: uniqueEmail(tag) })) }));
    expect(tooMany).toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('a list awaited is one page; iterated with for await, it is every item of every page', async () => {
    const tag = `pages${Date.now()}`;
    const made: User[] = [];
    for (let i = 0; i < 5; i++) made.push(await client.users.create({ email: uniqueEmail(tag) }));

    const first = await client.users.list({ limit: 2, query: tag });
    expect(first.data).toHaveLength(2);
    expect(typeof first.nextCursor).toBe('string');
    const second = await client.users.list({ limit: 2, query: tag, cursor: first.nextCursor! });
    expect(second.data.map((u) => u.id)).not.toContain(first.data[0]!.id);

    const before = gh.requests.filter((r) => r.path.startsWith('/v1/users?')).length;
    const seen: string[] = [];
    for await (const user of client.users.list({ limit: 2, query: tag })) seen.push(user.id);
    expect(seen.sort()).toEqual(made.map((u) => u.id).sort());
    // Three pages of two, two and one.
    expect(gh.requests.filter((r) => r.path.startsWith('/v1/users?')).length - before).toBe(3);
  });

  it('a list is fetched only when awaited or iterated', async () => {
    const before = gh.requests.length;
    const pending = client.organizations.list();
    expect(gh.requests.length).toBe(before);
    await pending;
    expect(gh.requests.length).toBe(before + 1);
  });

  it('organizations and members: create, list, change roles, remove; refusals carry the catalogue code', async () => {
    const owner = await client.users.create({ email: uniqueEmail('owner') });
    const other = await client.users.create({ email: uniqueEmail('member') });
    const org = await client.organizations.create({ name: 'Acme', ownerId: owner.id });
    expect((await client.organizations.get(org.id)).name).toBe('Acme');
    expect((await client.organizations.update(org.id, { name: 'Acme Inc' })).name).toBe('Acme Inc');
    const orgIds: string[] = [];
    for await (const o of client.organizations.list({ limit: 1 })) orgIds.push(o.id);
    expect(orgIds).toContain(org.id);

    expect((await client.members.add(org.id, { email: other.email })).role).toBe('member');
    expect((await client.members.update(org.id, other.id, { role: 'admin' })).role).toBe('admin');
    expect((await client.members.get(org.id, other.id)).userId).toBe(other.id);
    const members: string[] = [];
    for await (const m of client.members.list(org.id, { limit: 1 })) members.push(m.userId);
    expect(members.sort()).toEqual([owner.id, other.id].sort());

    const lastOwner = await apiError(client.members.remove(org.id, owner.id));
    expect(lastOwner).toMatchObject({ status: 403, code: 'forbidden' });
    expect(lastOwner.message).toMatch(/last owner/);

    const duplicate = await apiError(client.members.add(org.id, { userId: other.id }));
    expect(duplicate).toMatchObject({ status: 409, code: 'conflict' });

    expect(await client.members.remove(org.id, other.id)).toEqual({ organizationId: org.id, userId: other.id, removed: true });
    expect(await client.organizations.delete(org.id)).toEqual({ id: org.id, deleted: true });
  });

  it('bans: ban and unban a user', async () => {
    const user = await client.users.create({ email: uniqueEmail('banned') });
    expect((await client.users.ban(user.id)).banned).toBe(true);
    expect((await client.users.get(user.id)).banned).toBe(true);
    expect((await client.users.unban(user.id)).banned).toBe(false);
    await client.users.update(user.id, { publicMetadata: { plan: 'pro', limits: { seats: 3 } } });
    const merged = await client.users.updateMetadata(user.id, {
      publicMetadata: { limits: { projects: 2 } },
      privateMetadata: { crm: 'x' },
    });
    expect(merged).toMatchObject({ publicMetadata: { plan: 'pro', limits: { seats: 3, projects: 2 } }, privateMetadata: { crm: 'x' } });
    expect(await apiError(client.users.ban('user_missing'))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('passkeys: a user without any lists none; an unknown user or passkey is 404', async () => {
    const user = await client.users.create({ email: uniqueEmail('passkeys') });
    expect(await client.users.listPasskeys(user.id)).toEqual([]);
    expect(await apiError(client.users.listPasskeys('user_missing'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await apiError(client.users.deletePasskey(user.id, 'passkey_missing'))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('invitations and domains: invite, list, revoke; add, change and delete a vouched domain', async () => {
    const owner = await client.users.create({ email: uniqueEmail('owner') });
    const org = await client.organizations.create({ name: 'Invites', ownerId: owner.id });
    const invitee = uniqueEmail('invitee');
    const invitation = await client.invitations.create(org.id, { email: invitee, role: 'admin', expiresInDays: 3 });
    expect(invitation).toMatchObject({ organizationId: org.id, email: invitee, role: 'admin', status: 'pending' });
    expect((await client.invitations.list(org.id, { status: 'pending' })).data.map((i) => i.id)).toEqual([invitation.id]);
    expect((await client.invitations.revoke(org.id, invitation.id)).status).toBe('revoked');
    const listed: string[] = [];
    for await (const i of client.invitations.list(org.id, { status: 'revoked' })) listed.push(i.id);
    expect(listed).toEqual([invitation.id]);
    const member = await apiError(client.invitations.create(org.id, { email: owner.email, role: 'member' }));
    expect(member).toMatchObject({ status: 409, code: 'conflict' });

    const domain = await client.domains.create(org.id, { name: 'invites.example', enrollmentMode: 'automatic_invitation' });
    expect(domain).toMatchObject({ name: 'invites.example', verified: true, enrollmentMode: 'automatic_invitation' });
    expect((await client.domains.update(org.id, domain.id, { enrollmentMode: 'manual_invitation' })).enrollmentMode).toBe(
      'manual_invitation',
    );
    expect((await client.domains.list(org.id)).data.map((d) => d.name)).toEqual(['invites.example']);
    expect(await client.domains.delete(org.id, domain.id)).toEqual({ id: domain.id, deleted: true });
  });

  it('a bad request is GatehouseApiError 400 invalid_request, with the fields in details', async () => {
    const error = await apiError(client.users.create({ email: '' }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(error.details).toBeDefined();
  });

  it('a wrong secret key is 401 unauthenticated', async () => {
    const wrong = createGatehouseClient({ secretKey: 'sk_test_wrong', baseUrl: gh.baseUrl });
    expect(await apiError(wrong.users.list())).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

describe('the admin client and rate limits', () => {
  const T0 = 1_800_000_000_000;
  let now = T0;
  let gh: Gatehouse;
  let secretKey: string;
  beforeAll(async () => {
    gh = await startGatehouse({ rateLimit: { clock: () => now } });
    secretKey = gh.development.secretKey;
    await gh.setSettings(gh.development, { rateLimitPerMinute: 2 });
  });
  afterAll(() => gh.close());

  /** Spends the window at T0 and moves to 1 s before a request is free again, so a 429 says Retry-After: 1. */
  async function exhaust(client: GatehouseClient) {
    now += 120_000; // a fresh window, always forward
    await client.users.list();
    await client.users.list();
    now += 59_000;
  }

  it('a 429 waits Retry-After, then retries and succeeds', async () => {
    const client = createGatehouseClient({ secretKey, baseUrl: gh.baseUrl });
    await exhaust(client);
    // The server's clock moves on when it refuses, as real time would during the wait.
    gh.onResponse = (request) => {
      if (request.status === 429) now += 2_000;
    };
    const from = gh.requests.length;
    const page = await client.users.list();
    gh.onResponse = undefined;
    expect(page.data).toEqual([]);
    expect(gh.requests.slice(from).map((r) => r.status)).toEqual([429, 200]);
  });

  it('retries are bounded: with maxRetries 0 the 429 is thrown, with its Retry-After', async () => {
    const client = createGatehouseClient({ secretKey, baseUrl: gh.baseUrl, retry: { maxRetries: 0 } });
    await exhaust(client);
    const from = gh.requests.length;
    const error = await apiError(client.users.list());
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(error.message).toMatch(/requests per minute/);
    expect(gh.requests.length - from).toBe(1);
  });

  it('a Retry-After longer than maxWaitSeconds is thrown at once, not waited for', async () => {
    const client = createGatehouseClient({ secretKey, baseUrl: gh.baseUrl, retry: { maxWaitSeconds: 0 } });
    await exhaust(client);
    const from = gh.requests.length;
    expect((await apiError(client.users.list())).status).toBe(429);
    expect(gh.requests.length - from).toBe(1);
  });
});

describe('createGatehouseClient refuses what would leak or misroute a secret key', () => {
  it('refuses to run in a browser', () => {
    const global = globalThis as Record<string, unknown>;
    global.window = {};
    global.document = {};
    try {
      expect(() => createGatehouseClient({ secretKey: 'sk_test_x', baseUrl: 'http://localhost:4000' })).toThrow(/never ship to a browser/);
    } finally {
      delete global.window;
      delete global.document;
    }
  });

  it('refuses a publishable key and a baseUrl ending in /v1', () => {
    expect(() => createGatehouseClient({ secretKey: 'pk_test_x', baseUrl: 'http://localhost:4000' })).toThrow(/sk_test_/);
    expect(() => createGatehouseClient({ secretKey: 'sk_test_x', baseUrl: 'http://localhost:4000/v1' })).toThrow(/without \/v1/);
  });
});

describe('the admin client: Retry-After in decimal seconds', () => {
  it('Retry-After: 1.5 is read as 1.5 s, not as a date in the past', async () => {
    const { createServer } = await import('node:http');
    let hits = 0;
    const server = createServer((_request, response) => {
      hits += 1;
      response
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '1.5' })
        .end(JSON.stringify({ error: { code: 'rate_limited', message: 'Too many requests per minute; wait and retry.' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const client = createGatehouseClient({ secretKey: 'sk_test_x', baseUrl: `http://127.0.0.1:${port}`, retry: { maxRetries: 0 } });
      const error = await apiError(client.users.list());
      expect(error.status).toBe(429);
      expect(error.retryAfter).toBe(1.5);
      expect(hits).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the admin client when Gatehouse cannot be reached', () => {
  async function failure(promise: PromiseLike<unknown>): Promise<unknown> {
    return Promise.resolve(promise).then(
      () => undefined,
      (e: unknown) => e,
    );
  }

  it('a refused connection is a GatehouseNetworkError of kind network, not a GatehouseApiError', async () => {
    // A port that was just free: nothing listens there.
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const client = createGatehouseClient({ secretKey: 'sk_test_unreachable', baseUrl: `http://127.0.0.1:${port}`, retry: { maxRetries: 0 } });
    const error = await failure(client.users.get('user_x'));
    expect(error).toBeInstanceOf(GatehouseNetworkError);
    expect(error).not.toBeInstanceOf(GatehouseApiError);
    expect(error).toMatchObject({ kind: 'network', method: 'GET' });
    expect((error as Error).message).toContain('/v1/users/user_x');
    expect((error as Error).message).not.toContain('sk_test_unreachable');
    expect((error as Error).cause).toBeInstanceOf(TypeError);
  });

  it('an answer that never comes is a GatehouseNetworkError of kind timeout', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {
      // Accepts the request and never answers.
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const client = createGatehouseClient({ secretKey: 'sk_test_silent', baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 300 });
      const error = await failure(client.users.create({ email: 'ada@example.com' }));
      expect(error).toBeInstanceOf(GatehouseNetworkError);
      expect(error).toMatchObject({ kind: 'timeout', method: 'POST' });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
