import type { EnvironmentId } from '../../src/lib/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { testDb } from '../helpers/store.js';
import { within } from '../helpers/wait.js';
import { CONSOLE_ORIGIN, consoleConfig, firstOperator, operatorSignIn, tokenOf } from './helpers.js';

describe(`operators (${testDb()})`, () => {
  let t: TestApp;
  let operator: Awaited<ReturnType<typeof firstOperator>>;
  const asOperator = (accessToken = operator.accessToken) => ({ authorization: `Bearer ${accessToken}`, origin: CONSOLE_ORIGIN });

  beforeAll(async () => {
    t = await startTestApp();
    operator = await firstOperator(t);
  });
  afterAll(() => t.close());

  it('prints no setup link once an operator exists', async () => {
    expect(operator.link).toMatch(/^http:\/\/gatehouse\.test\/console\/setup\?token=gh_setup_/);
    expect(await t.app.operators.setupLinkIfNoOperator()).toBeNull();
  });

  it("takes an operator's access token on the platform API, from the console's origin", async () => {
    const created = await t.call({ method: 'POST', url: '/v1/platform/projects', headers: asOperator(), payload: { name: 'By an operator' } });
    expect(created.statusCode).toBe(201);
    const listed = json(await t.call({ method: 'GET', url: '/v1/platform/projects?limit=100', headers: asOperator() }));
    expect(listed.data.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['Test project', 'By an operator']));
    // Without Origin too (a script of the operator's own).
    const read = await t.call({ method: 'GET', url: `/v1/platform/projects/${json(created).id}`, credential: operator.accessToken });
    expect(read.statusCode).toBe(200);
  });

  it("acts on an environment's users through the platform's copies of the secret-key routes", async () => {
    const user = await signUp(t, { email: uniqueEmail('found') });
    const env = t.project.development.id;
    const found = json(await t.call({ method: 'GET', url: `/v1/platform/environments/${env}/users?query=found`, headers: asOperator() }));
    expect(found.data.map((u: { id: string }) => u.id)).toContain(user.userId);
    // A second session, revoked alone.
    const second = json(await signIn(t, user.email, GOOD_PASSWORD));
    const listed = json(await t.call({ method: 'GET', url: `/v1/platform/environments/${env}/users/${user.userId}/sessions`, headers: asOperator() }));
    expect(listed.data).toHaveLength(2);
    const secondId = listed.data.find((s: { id: string }) => s.id !== JSON.parse(Buffer.from(user.accessToken.split('.')[1]!, 'base64url').toString()).sid).id;
    const one = await t.call({ method: 'DELETE', url: `/v1/platform/environments/${env}/users/${user.userId}/sessions/${secondId}`, headers: asOperator() });
    expect(one.statusCode).toBe(204);
    expect(json(await t.call({ method: 'GET', url: '/v1/me', credential: second.session.accessToken })).error.code).toBe('session_revoked');
    // Another user's session id is not this user's.
    const other = await signUp(t, { email: uniqueEmail('other') });
    const otherSid = JSON.parse(Buffer.from(other.accessToken.split('.')[1]!, 'base64url').toString()).sid;
    const foreign = await t.call({ method: 'DELETE', url: `/v1/platform/environments/${env}/users/${user.userId}/sessions/${otherSid}`, headers: asOperator() });
    expect(foreign.statusCode).toBe(404);

    const revoked = await t.call({ method: 'POST', url: `/v1/platform/environments/${env}/users/${user.userId}/sessions/revoke`, headers: asOperator() });
    expect(json(revoked).revoked).toBe(1);
    expect(revoked.statusCode).toBe(200);
    const me = await t.call({ method: 'GET', url: '/v1/me', credential: user.accessToken });
    expect(json(me).error.code).toBe('session_revoked');
    // The copy is scoped to the environment in the path: the production one does not have this user.
    const elsewhere = await t.call({ method: 'GET', url: `/v1/platform/environments/${t.project.production.id}/users/${user.userId}`, headers: asOperator() });
    expect(elsewhere.statusCode).toBe(404);
  });

  it('invites an operator by email; the link creates that operator once, for that address', async () => {
    const email = uniqueEmail('invited');
    const invited = await t.call({ method: 'POST', url: '/v1/platform/operators/invitations', headers: asOperator(), payload: { email } });
    expect(invited.statusCode).toBe(201);
    const { url } = json(invited);
    expect(url).toMatch(/\/console\/setup\?token=gh_invite_/);
    const { environmentId } = await consoleConfig(t);
    const emails = await t.store.db
      .selectFrom('email_outbox')
      .select(['to_address'])
      .where('environment_id', '=', environmentId as EnvironmentId)
      .where('to_address', '=', email)
      .execute();
    expect(emails).toHaveLength(1);

    const wrongAddress = await t.call({ method: 'POST', url: '/v1/console/setup', payload: { token: tokenOf(url), email: uniqueEmail(), password: GOOD_PASSWORD } });
    expect(wrongAddress.statusCode).toBe(400);
    const accepted = await t.call({ method: 'POST', url: '/v1/console/setup', payload: { token: tokenOf(url), password: GOOD_PASSWORD, firstName: 'Grace' } });
    expect(accepted.statusCode).toBe(201);
    expect(json(accepted)).toMatchObject({ email, firstName: 'Grace' });
    const second = await operatorSignIn(t, email);
    const operators = json(await t.call({ method: 'GET', url: '/v1/platform/operators', headers: asOperator(second.accessToken) }));
    expect(operators.data.map((o: { email: string }) => o.email).sort()).toEqual([operator.email, email].sort());

    const again = await t.call({ method: 'POST', url: '/v1/platform/operators/invitations', headers: asOperator(), payload: { email } });
    expect(again.statusCode).toBe(409);
  });

  it('lists operators a page at a time (past the 100 one page holds)', async () => {
    for (const tag of ['page-a', 'page-b']) {
      const { url } = json(await t.call({ method: 'POST', url: '/v1/platform/operators/invitations', credential: t.platformKey, payload: { email: uniqueEmail(tag) } }));
      expect((await t.call({ method: 'POST', url: '/v1/console/setup', payload: { token: tokenOf(url), password: GOOD_PASSWORD } })).statusCode).toBe(201);
    }
    const all = json(await t.call({ method: 'GET', url: '/v1/platform/operators?limit=100', credential: t.platformKey }));
    expect(all.nextCursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await t.call({ method: 'GET', url: `/v1/platform/operators?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, credential: t.platformKey });
      expect(page.statusCode).toBe(200);
      const body = json(page);
      expect(body.data.length).toBeLessThanOrEqual(1);
      seen.push(...body.data.map((o: { id: string }) => o.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.data.map((o: { id: string }) => o.id));
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect((await t.call({ method: 'GET', url: '/v1/platform/operators?limit=101', credential: t.platformKey })).statusCode).toBe(400);
    const foreign = await t.call({ method: 'GET', url: '/v1/platform/operators?cursor=nonsense', credential: t.platformKey });
    expect(foreign.statusCode).toBe(400);
  });

  it('records who changed what, and when, in the audit log', async () => {
    const before = Date.now();
    const patched = await t.call({
      method: 'PATCH',
      url: `/v1/platform/environments/${t.project.development.id}`,
      headers: asOperator(),
      payload: { authMethods: { magicLink: false } },
    });
    expect(patched.statusCode).toBe(200);
    await t.call({ method: 'POST', url: `/v1/platform/environments/${t.project.development.id}/secret-keys`, credential: t.platformKey });
    // Reads and refusals are not actions.
    await t.call({ method: 'PATCH', url: `/v1/platform/environments/${t.project.development.id}`, headers: asOperator(), payload: { signUp: 'yes' } });

    const log = json(await t.call({ method: 'GET', url: '/v1/platform/audit-log?limit=3', headers: asOperator() }));
    const [key, patch] = log.data;
    expect(key).toMatchObject({
      actor: { kind: 'platform_key', id: null },
      action: 'POST /v1/platform/environments/:environmentId/secret-keys',
      target: `/v1/platform/environments/${t.project.development.id}/secret-keys`,
      status: 201,
    });
    expect(patch).toMatchObject({
      actor: { kind: 'operator', id: operator.userId, email: operator.email },
      action: 'PATCH /v1/platform/environments/:environmentId',
      status: 200,
    });
    expect(patch.at).toBeGreaterThanOrEqual(before);
    expect(log.nextCursor).not.toBeNull();
    const next = json(await t.call({ method: 'GET', url: `/v1/platform/audit-log?limit=100&cursor=${encodeURIComponent(log.nextCursor)}`, headers: asOperator() }));
    const actions = next.data.map((e: { action: string }) => e.action);
    expect(actions).toContain('Created the first operator');
    expect(next.data.some((e: { id: string }) => log.data.some((f: { id: string }) => f.id === e.id))).toBe(false);
  });

  it('counts requests per minute per environment, for the usage chart', async () => {
    const project = await t.createProject('Rates');
    for (let i = 0; i < 3; i++) await t.call({ method: 'GET', url: '/v1/environment', credential: project.development.publishableKey });
    const rate = json(await t.call({ method: 'GET', url: `/v1/platform/projects/${project.id}/requests`, headers: asOperator() }));
    const development = rate.environments.find((e: { type: string }) => e.type === 'development');
    const production = rate.environments.find((e: { type: string }) => e.type === 'production');
    expect(development.perMinute).toHaveLength(60);
    expect(development.perMinute.at(-1).requests).toBe(3);
    expect(production.perMinute.reduce((n: number, p: { requests: number }) => n + p.requests, 0)).toBe(0);
  });

  it("serves the console's config: the operators' environment and its publishable key", async () => {
    const config = await consoleConfig(t);
    expect(config.publishableKey).toMatch(/^pk_live_/);
    const environment = json(await t.call({ method: 'GET', url: '/v1/environment', credential: config.publishableKey }));
    expect(environment).toMatchObject({ id: config.environmentId, signUp: false, authMethods: { password: true, magicLink: false } });
  });
});

describe(`operators: the audit log's retention (${testDb()})`, () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, auditRetentionDays: 30 });
  });
  afterAll(() => t.close());

  const change = (name: string) => t.call({ method: 'PATCH', url: `/v1/platform/projects/${t.project.id}`, credential: t.platformKey, payload: { name } });
  const entries = async () => json(await t.call({ method: 'GET', url: '/v1/platform/audit-log?limit=100', credential: t.platformKey })).data as { at: number }[];

  it('entries older than AUDIT_RETENTION_DAYS are pruned; newer ones stay', async () => {
    expect((await change('Old name')).statusCode).toBe(200);
    clock.advance(31 * 86_400_000);
    expect((await change('New name')).statusCode).toBe(200);
    // The entry is written as the answer leaves (onResponse): wait for it rather than race it.
    await within(5_000, async () => (await entries()).length === 2);
    expect(await t.app.operators.pruneAuditLog(30)).toBe(1);
    const left = await entries();
    expect(left).toHaveLength(1);
    expect(left[0]!.at).toBe(clock.now());
  });
});

