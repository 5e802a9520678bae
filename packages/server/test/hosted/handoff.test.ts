import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { REDIRECT } from '../helpers/flows.js';
import { me, signUp } from '../helpers/identity.js';

describe('hosted pages and the handoff', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  const issue = (accessToken: string, redirectUrl: string) =>
    t.call({ method: 'POST', url: '/v1/me/handoff', credential: accessToken, payload: { redirectUrl } });
  const exchange = (token: string, publishableKey = env().publishableKey) =>
    t.call({ method: 'POST', url: '/v1/auth/handoff', credential: publishableKey, payload: { token } });
  const tokenOf = (url: string) => new URLSearchParams(new URL(url).hash.slice(1)).get('__gh_handoff')!;

  it('hands a signed-in user to the redirect URL, where the token becomes a session of its own', async () => {
    const user = await signUp(t);
    const issued = await issue(user.accessToken, `${REDIRECT}?next=%2Fhome`);
    expect(issued.statusCode).toBe(200);
    const redirect = new URL(issued.json().redirectUrl);
    expect(redirect.origin + redirect.pathname + redirect.search).toBe(`${REDIRECT}?next=%2Fhome`);
    const res = await exchange(tokenOf(redirect.href));
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toEqual({ id: user.userId, email: user.email });
    expect(res.json().session.accessToken).not.toBe(user.accessToken);
    expect((await me(t, res.json().session.accessToken)).json().user.id).toBe(user.userId);
  });

  it('serves each hosted page with the environment\'s publishable key and a strict CSP', async () => {
    for (const page of ['sign-in', 'sign-up', 'user', 'organization', 'accept-invitation']) {
      const res = await t.call({ method: 'GET', url: `/hosted/${env().id}/${page}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.body).toContain(env().publishableKey);
      expect(res.body).toContain('"redirectError":null');
      expect(res.body).toContain(`"applicationName":"Test project"`);
    }
    expect((await t.call({ method: 'GET', url: `/hosted/${env().id}/nope` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `/hosted/env_missing/sign-in` })).statusCode).toBe(404);
  });

  it('a redirect_url outside the origin lock is refused on the page with a message', async () => {
    const res = await t.call({ method: 'GET', url: `/hosted/${env().id}/sign-in?redirect_url=${encodeURIComponent('https://evil.example.com/steal')}` });
    expect(res.statusCode).toBe(200);
    const config = JSON.parse(/<script id="gatehouse-config" type="application\/json">(.*?)<\/script>/.exec(res.body)![1]!);
    expect(config.redirectError).toMatch(/redirect_url .*is not allowed/);
  });

  it('serves the page script built at install', async () => {
    const res = await t.call({ method: 'GET', url: '/hosted/assets/hosted.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/javascript');
    expect(res.body).toContain('gatehouse-config');
  });
});
