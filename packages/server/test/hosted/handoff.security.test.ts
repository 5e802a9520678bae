import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { REDIRECT } from '../helpers/flows.js';
import { signUp } from '../helpers/identity.js';

describe('handoff attacks', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  async function token(redirectUrl = REDIRECT): Promise<string> {
    const user = await signUp(t);
    const res = await t.call({ method: 'POST', url: '/v1/me/handoff', credential: user.accessToken, payload: { redirectUrl } });
    expect(res.statusCode).toBe(200);
    return new URLSearchParams(new URL(res.json().redirectUrl).hash.slice(1)).get('__gh_handoff')!;
  }
  const exchange = (value: string, publishableKey = env().publishableKey) =>
    t.call({ method: 'POST', url: '/v1/auth/handoff', credential: publishableKey, payload: { token: value } });

  it('replaying a used handoff token is refused', async () => {
    const value = await token();
    expect((await exchange(value)).statusCode).toBe(200);
    const again = await exchange(value);
    expect(again.statusCode).toBe(401);
    expect(again.json().error.code).toBe('invalid_credentials');
  });

  it('two racing exchanges of one token: exactly one wins', async () => {
    const value = await token();
    const results = await Promise.all([exchange(value), exchange(value), exchange(value)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401]);
  });

  it('a handoff token older than 60 s is refused', async () => {
    const value = await token();
    clock.advance(60_001);
    expect((await exchange(value)).json().error.code).toBe('invalid_credentials');
  });

  it('a handoff token from one environment is refused by another', async () => {
    const value = await token();
    const other = await t.createProject('Other project');
    expect((await exchange(value, other.development.publishableKey)).statusCode).toBe(401);
    // Still good where it was issued: the refusal did not consume it.
    expect((await exchange(value)).statusCode).toBe(200);
  });

  it('a handoff to an origin outside the lock is refused before any token exists', async () => {
    const user = await signUp(t);
    const res = await t.call({ method: 'POST', url: '/v1/me/handoff', credential: user.accessToken, payload: { redirectUrl: 'https://evil.example.com/x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });

  it('only a hash of the token is stored', async () => {
    const value = await token();
    const rows = await t.store.db.selectFrom('handoff_tokens').selectAll().where('environment_id', '=', env().id).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(value);
  });

  it('a guessed token is refused', async () => {
    expect((await exchange('A'.repeat(43))).statusCode).toBe(401);
  });
});
