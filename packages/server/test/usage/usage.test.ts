import { testEnvironmentId } from '../helpers/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, refresh, signIn, signUp } from '../helpers/identity.js';

const clock = testClock(Date.UTC(2031, 0, 31, 23, 59, 0));

describe('monthly active users and GET /v1/platform/projects/{id}/usage', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const usage = (projectId: string, month?: string) =>
    t.call({ method: 'GET', url: `/v1/platform/projects/${projectId}/usage${month ? `?month=${month}` : ''}`, credential: t.platformKey });

  it('counts each user once per UTC month, bills production only, and writes one row per user per month', async () => {
    const project = await t.createProject('usage');
    const prodA = await signUp(t, { environment: project.production });
    const prodB = await signUp(t, { environment: project.production });
    const dev = await signUp(t, { environment: project.development });
    // More activity by the same users in the same month counts nothing more.
    await signIn(t, prodA.email, GOOD_PASSWORD, project.production);
    let token = prodA.refreshToken;
    for (let i = 0; i < 3; i++) token = json(await refresh(t, token, project.production)).session.refreshToken;

    const january = await usage(project.id, '2031-01');
    expect(january.statusCode).toBe(200);
    const body = json(january);
    expect(body.billableMonthlyActiveUsers).toBe(2);
    expect(body.month).toBe('2031-01');
    const byType = Object.fromEntries(body.environments.map((e: { type: string }) => [e.type, e]));
    expect(byType.production).toEqual({ id: project.production.id, type: 'production', monthlyActiveUsers: 2, billable: true });
    expect(byType.development).toEqual({ id: project.development.id, type: 'development', monthlyActiveUsers: 1, billable: false });

    const rows = await t.store.db
      .selectFrom('monthly_active_users')
      .selectAll()
      .where('environment_id', '=', testEnvironmentId(project.production.id))
      .execute();
    expect(rows).toHaveLength(2);

    // Two minutes later it is February (UTC): a refresh counts the user again, in February only.
    clock.advance(120_000);
    const refreshed = await refresh(t, token, project.production);
    expect(refreshed.statusCode).toBe(200);
    const february = json(await usage(project.id, '2031-02'));
    expect(february.billableMonthlyActiveUsers).toBe(1);
    expect(json(await usage(project.id)).month).toBe('2031-02');
    expect(json(await usage(project.id, '2031-01')).billableMonthlyActiveUsers).toBe(2);
    expect(prodB.userId).not.toBe(prodA.userId);
    expect(dev.userId).toBeDefined();
  });

  it('refuses a malformed month and an unknown project', async () => {
    for (const month of ['2031-13', '2031-1', '31-01', 'january']) {
      const response = await usage(t.project.id, month);
      expect(response.statusCode, month).toBe(400);
      expect(json(response).error.details).toEqual({ fields: ['month'] });
    }
    expect((await usage('proj_unknown', '2031-01')).statusCode).toBe(404);
    const withSk = await t.call({
      method: 'GET',
      url: `/v1/platform/projects/${t.project.id}/usage`,
      credential: t.project.production.secretKey,
    });
    expect(withSk.statusCode).toBe(403);
  });
});
