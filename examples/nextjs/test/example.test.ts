import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, CHROMIUM, CHROMIUM_ARGS } from '../../../packages/js/test/helpers/browser.js';
import { GOOD_PASSWORD, startLiveGatehouse, uniqueEmail, type LiveGatehouse } from '../../../packages/js/test/helpers/gatehouse.js';
import { buildExample, startExample, type RunningExample } from './build.js';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe.skipIf(!chromiumAvailable())('examples/nextjs (built, npm start) in Chromium', () => {
  let live: LiveGatehouse;
  let browser: Browser;
  let app: RunningExample;
  let attacker: Server;
  let attackerUrl: string;
  let env: { id: string; publishableKey: string; secretKey: string };

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    [live, browser] = await Promise.all([
      startLiveGatehouse(),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      buildExample(),
    ]);
    env = (await live.t.createProject('Next.js example')).development;
    // 30 s tokens: the expiry and the interstitial refresh happen within the test.
    await live.t.setSettings(env.id, { accessTokenTtlSeconds: 30 });
    app = await startExample(await freePort(), {
      NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY: env.publishableKey,
      NEXT_PUBLIC_GATEHOUSE_URL: live.url,
      GATEHOUSE_SECRET_KEY: env.secretKey,
    });
    // Another site's page (same site, another origin: SameSite=Lax still sends the cookie).
    attacker = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end(
        `<form id="f" method="POST" action="${app.url}/api/notes"><input name="note" value="forged"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://localhost:${(attacker.address() as { port: number }).port}/`;
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await live?.close();
  });

  async function createUser(): Promise<{ email: string; id: string }> {
    const email = uniqueEmail('next');
    const res = await live.t.call({ method: 'POST', url: '/v1/users', credential: env.secretKey, payload: { email, password: GOOD_PASSWORD } });
    expect(res.statusCode).toBe(201);
    return { email, id: (res.json() as { id: string }).id };
  }

  async function newPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => console.error('[page error]', error));
    return page;
  }

  /** Signs in through <SignIn/>, starting from /protected: the proxy sends a signed-out visitor to /sign-in and back. */
  async function signIn(context: BrowserContext, email: string): Promise<Page> {
    const page = await newPage(context);
    await page.goto(`${app.url}/protected`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(new URL(page.url()).searchParams.get('redirect_url')).toBe('/protected');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#user-id').waitFor();
    return page;
  }

  const sessionCookie = async (context: BrowserContext) => (await context.cookies(app.url)).find((c) => c.name === '__gh_session');

  it('sign-in, the server-rendered user id, GET /api/me on the Edge runtime, the server action, sign-out; never the refresh token in a cookie', async () => {
    const user = await createUser();
    const context = await browser.newContext();
    const page = await signIn(context, user.email);
    expect(await page.locator('#user-id').textContent()).toBe(user.id);
    expect(await page.locator('#org-id').textContent()).toBe('none');
    expect(await page.locator('#email').textContent()).toBe(user.email); // currentUser(), with the secret key
    const cookie = await sessionCookie(context);
    expect(cookie).toMatchObject({ path: '/', sameSite: 'Lax', httpOnly: false });
    expect(claimsOf(cookie!.value).sub).toBe(user.id);

    // The route handler runs on the Edge runtime, where the token is verified with WebCrypto.
    const me = await page.request.get(`${app.url}/api/me`);
    expect(me.status()).toBe(200);
    expect(await me.json()).toEqual({ userId: user.id, orgId: null });
    expect(me.headers()['x-gatehouse-crypto']).toBe('webcrypto');
    const anonymous = await fetch(`${app.url}/api/me`);
    expect(anonymous.status).toBe(401);

    // A bearer token works as well as the cookie (an API client).
    const bearer = await fetch(`${app.url}/api/me`, { headers: { authorization: `Bearer ${cookie!.value}` } });
    expect(await bearer.json()).toEqual({ userId: user.id, orgId: null });

    // The server action checks the session itself and saves the note.
    await page.getByLabel('Note').fill('hello from a server action');
    await page.getByRole('button', { name: 'Save note' }).click();
    await expect.poll(() => page.locator('#note').textContent()).toBe('hello from a server action');

    expect((await context.cookies()).some((c) => c.value.includes('rt_'))).toBe(false);

    // Sign-out clears the cookie; the protected page sends the visitor to sign-in again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(async () => (await sessionCookie(context))?.value ?? null).toBeNull();
    // The provider re-renders the page after sign-out (a client navigation that may still run, and
    // abort a goto that overlaps it): the protected page must end on sign-in.
    await expect
      .poll(async () => {
        try {
          await page.goto(`${app.url}/protected`);
          return new URL(page.url()).pathname;
        } catch {
          return 'navigation aborted';
        }
      })
      .toBe('/sign-in');
    expect((await page.request.get(`${app.url}/api/me`)).status()).toBe(401);
    await context.close();
  }, 120_000);

  it('a cross-site form POST carrying the cookie is signed out (Origin check), while the same POST from the app itself saves', async () => {
    const user = await createUser();
    const context = await browser.newContext();
    const page = await signIn(context, user.email);

    const forged = await newPage(context);
    const [answer] = await Promise.all([
      forged.waitForResponse((r) => r.url() === `${app.url}/api/notes`),
      forged.goto(attackerUrl),
    ]);
    // The browser did send the cookie (same site): only the Origin check refused it.
    expect(answer.request().headers()['cookie'] ?? (await answer.request().allHeaders())['cookie']).toContain('__gh_session=');
    expect(answer.status()).toBe(401);
    await page.reload();
    expect(await page.locator('#note').textContent()).toBe('(none)');

    const own = await page.evaluate(async (url) => {
      const body = new FormData();
      body.set('note', 'mine');
      return (await fetch(url, { method: 'POST', body })).status;
    }, `${app.url}/api/notes`);
    expect(own).toBe(200);
    await page.reload();
    expect(await page.locator('#note').textContent()).toBe('mine');
    await context.close();
  }, 120_000);

  it('a forged or alg "none" cookie is signed out: /api/me 401, /protected sends to sign-in (no interstitial)', async () => {
    const user = await createUser();
    const context = await browser.newContext();
    const page = await signIn(context, user.email);
    const real = (await sessionCookie(context))!.value;
    const [header, , signature] = real.split('.');
    const claims = { ...claimsOf(real), sub: 'user_someone_else' };
    for (const value of [`${header}.${b64(claims)}.${signature}`, `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims)}.`]) {
      const other = await browser.newContext();
      await other.addCookies([{ name: '__gh_session', value, url: app.url }]);
      const visitor = await newPage(other);
      expect((await visitor.request.get(`${app.url}/api/me`)).status()).toBe(401);
      const response = await visitor.goto(`${app.url}/protected`);
      expect(new URL(visitor.url()).pathname).toBe('/sign-in');
      expect(response?.headers()['x-gatehouse-auth']).toBeUndefined();
      await other.close();
    }
    await page.close();
    await context.close();
  }, 120_000);

  it('an expired cookie on a page load gets the interstitial, which refreshes from the stored session and reloads into the page', async () => {
    const user = await createUser();
    const context = await browser.newContext();
    const page = await signIn(context, user.email);
    // No page left to refresh ahead of expiry: the cookie's token runs out (30 s, plus the 5 s skew).
    await page.close();
    const expired = (await sessionCookie(context))!.value;
    const wait = (claimsOf(expired).exp as number) * 1000 + 6_000 - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));

    const later = await newPage(context);
    const statuses: { status: number; interstitial: boolean }[] = [];
    later.on('response', (r) => {
      if (r.url() === `${app.url}/protected`) statuses.push({ status: r.status(), interstitial: r.headers()['x-gatehouse-auth'] === 'interstitial' });
    });
    await later.goto(`${app.url}/protected`);
    await later.locator('#user-id').waitFor();
    expect(await later.locator('#user-id').textContent()).toBe(user.id);
    expect(statuses[0]).toEqual({ status: 401, interstitial: true });
    expect(statuses.at(-1)).toEqual({ status: 200, interstitial: false });
    const renewed = (await sessionCookie(context))!.value;
    expect(renewed).not.toBe(expired);
    expect(claimsOf(renewed).sid).toBe(claimsOf(expired).sid);

    // An API request with the expired cookie is simply signed out (no page to answer it with).
    const api = await fetch(`${app.url}/api/me`, { headers: { cookie: `__gh_session=${expired}` } });
    expect(api.status).toBe(401);
    await context.close();
  }, 120_000);
});
