import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { T0 } from '../helpers/window.js';
import { probeRoutes } from './probe.js';

describe('one environment cannot spend another one’s budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimit: { clock: () => T0 }, routes: probeRoutes });
  });
  afterAll(() => t.close());

  const get = (credential: string) => t.call({ method: 'GET', url: '/v1/environment', credential });

  it('exhausting one environment, with any of its keys, leaves every other environment untouched', async () => {
    const victim = await t.createProject('Victim', 'victim.test');
    const attacker = t.project.development;
    await t.setSettings(attacker.id, { rateLimitPerMinute: 5 });
    await t.setSettings(victim.development.id, { rateLimitPerMinute: 5 });

    // PK and SK of one environment draw on one budget.
    for (let i = 0; i < 3; i++) expect((await get(attacker.publishableKey)).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await t.call({ method: 'POST', url: '/v1/test/probe', credential: attacker.secretKey, payload: { outcome: 'ok' } });
      expect(res.statusCode).toBe(200);
    }
    for (let i = 0; i < 200; i++) expect((await get(attacker.publishableKey)).statusCode).toBe(429);
    const sk = await t.call({ method: 'POST', url: '/v1/test/probe', credential: attacker.secretKey, payload: { outcome: 'ok' } });
    expect(sk.statusCode).toBe(429);

    // Another project, and the same project's other environment, keep their whole budget.
    const other = await get(victim.development.publishableKey);
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('4');
    const sibling = await get(t.project.production.publishableKey);
    expect(sibling.statusCode).toBe(200);
    expect(sibling.headers['x-ratelimit-remaining']).toBe('5999');
  });
});
