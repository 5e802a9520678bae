import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, CHROMIUM, CHROMIUM_ARGS } from '../../../packages/js/test/helpers/browser.js';
import { GOOD_PASSWORD, startLiveGatehouse, uniqueEmail, type LiveGatehouse } from '../../../packages/js/test/helpers/gatehouse.js';
// @ts-expect-error: the example's server is plain JavaScript, as a newcomer would write it.
import { createExampleApp } from '../server.js';

describe.skipIf(!chromiumAvailable())('examples/react-express in Chromium', () => {
  let live: LiveGatehouse;
  let browser: Browser;
  let server: Server;
  let appUrl: string;
  let react18Server: Server;
  let react18Url: string;
  let env: { id: string; publishableKey: string; secretKey: string };

  beforeAll(async () => {
    // The example builds its page when it starts (npm start), not at install: at install
    // @gatehouse/react may not be built yet. The test builds it the same way.
    const { build } = await import('vite');
    await build({ root: fileURLToPath(new URL('..', import.meta.url)), logLevel: 'warn' });
    // The same page on React 18 (examples/react18, its own React and react-dom 18).
    await build({ root: fileURLToPath(new URL('../../react18', import.meta.url)), logLevel: 'warn' });
    const { chromium } = await import('playwright-core');
    [live, browser] = await Promise.all([startLiveGatehouse(), chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })]);
    env = (await live.t.createProject('Example')).development;
    const app = await createExampleApp({ gatehouseUrl: live.url, publishableKey: env.publishableKey, secretKey: env.secretKey });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    appUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const dist = fileURLToPath(new URL('../../react18/dist/', import.meta.url));
    const app18 = await createExampleApp({ gatehouseUrl: live.url, publishableKey: env.publishableKey, secretKey: env.secretKey, dist });
    react18Server = await new Promise<Server>((resolve) => {
      const s = app18.listen(0, '127.0.0.1', () => resolve(s));
    });
    react18Url = `http://127.0.0.1:${(react18Server.address() as { port: number }).port}/`;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await new Promise((resolve) => react18Server?.close(resolve));
    await live?.close();
  });

  const sk = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    live.t.call({ method, url, credential: env.secretKey, ...(payload ? { payload } : {}) });

  async function createUser(tag: string) {
    const email = uniqueEmail(tag);
    const res = await sk('POST', '/v1/users', { email, password: GOOD_PASSWORD });
    expect(res.statusCode).toBe(201);
    return { email, id: (res.json() as { id: string }).id };
  }

  async function signedInPage(email: string, url = appUrl): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.on('pageerror', (error) => console.error('[page error]', error));
    await page.goto(url);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#claims-role').waitFor();
    return page;
  }

  // The answer to this click, as the page shows it: an earlier answer stays on the page until the
  // new one arrives, so the response is awaited first.
  const report = async (page: Page) => {
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin-report'),
      page.locator('#load-report').click(),
    ]);
    const result = page.locator('#report');
    await expect.poll(() => result.getAttribute('data-status')).toBe(String(response.status()));
    return { status: response.status(), text: await result.textContent() };
  };

  it('shows the organization role from the claims, and the live membership refuses a demoted admin', async () => {
    const owner = await createUser('owner');
    const colleague = await createUser('colleague');
    const ownerPage = await signedInPage(owner.email);
    await expect.poll(() => ownerPage.locator('#claims-role').textContent()).toBe('none (personal account)');
    await ownerPage.getByRole('button', { name: /Switch organization/ }).click();
    await ownerPage.getByRole('menuitem', { name: 'Create organization' }).click();
    await ownerPage.getByRole('dialog').getByLabel('Name').fill('Acme Corp');
    await ownerPage.getByRole('dialog').getByRole('button', { name: 'Create organization' }).click();
    await expect.poll(() => ownerPage.locator('#claims-role').textContent()).toBe('owner');
    expect((await report(ownerPage)).status).toBe(200);

    const orgs = await sk('GET', '/v1/organizations');
    const org = (orgs.json() as { data: { id: string; name: string }[] }).data.find((o) => o.name === 'Acme Corp')!;
    expect((await sk('POST', `/v1/organizations/${org.id}/members`, { userId: colleague.id, role: 'admin' })).statusCode).toBe(201);

    const page = await signedInPage(colleague.email);
    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitemradio', { name: /Acme Corp/ }).click();
    await expect.poll(() => page.locator('#claims-role').textContent()).toBe('admin');
    expect((await report(page)).status).toBe(200);

    // Demoted now: the token still says admin, the live check says no.
    expect((await sk('PATCH', `/v1/organizations/${org.id}/members/${colleague.id}`, { role: 'member' })).statusCode).toBe(200);
    const refused = await report(page);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('your role is now member');
    expect(await page.locator('#claims-role').textContent()).toBe('admin');
  });

  it('lets a newcomer sign up from the sign-in page, with the emailed code', async () => {
    // As on a fresh install: new environments require a verified email (the test projects do not).
    await live.t.setSettings(env.id, { emailVerification: 'required' });
    const email = uniqueEmail('newcomer');
    const page = await (await browser.newContext()).newPage();
    await page.goto(appUrl);
    await page.getByRole('link', { name: 'Sign up' }).click();
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Verification code').waitFor();
    // Development mail is captured: read the code as the README says.
    const mail = await sk('GET', `/v1/dev/emails?to=${encodeURIComponent(email)}&limit=1`);
    const code = /\b(\d{6})\b/.exec((mail.json() as { data: Array<{ text: string }> }).data[0]!.text)![1]!;
    await page.getByLabel('Verification code').fill(code);
    await page.getByRole('button', { name: 'Verify and create account' }).click();
    await page.locator('#claims-role').waitFor();
    await expect.poll(() => page.locator('#claims-role').textContent()).toBe('none (personal account)');
    // And back: the sign-up form links to the sign-in form.
    await (await browser.newContext()).newPage().then(async (other) => {
      await other.goto(`${appUrl}#sign-up`);
      await other.getByRole('link', { name: 'Sign in' }).click();
      await other.getByRole('button', { name: 'Continue' }).waitFor();
    });
    await live.t.setSettings(env.id, { emailVerification: 'off' });
  });

  it('signs in through the hosted page and comes back signed in', async () => {
    const user = await createUser('hosted');
    const page = await (await browser.newContext()).newPage();
    await page.goto(appUrl);
    await page.locator('#hosted-link').click();
    await page.waitForURL((url) => url.pathname.endsWith('/sign-in'));
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.href.startsWith(appUrl));
    await page.locator('#claims-role').waitFor();
    await expect.poll(() => page.locator('#claims-role').textContent()).toBe('none (personal account)');
  });

  it('runs on React 18: sign-in, the claims, an organization created and switched to, sign-out', async () => {
    const user = await createUser('react18');
    const errors: Error[] = [];
    const page = await signedInPage(user.email, react18Url);
    page.on('pageerror', (error) => errors.push(error));
    expect(await page.evaluate(() => document.documentElement.dataset.react)).toMatch(/^18\./);
    await expect.poll(() => page.locator('#claims-role').textContent()).toBe('none (personal account)');
    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitem', { name: 'Create organization' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill('Eighteen Inc');
    await page.getByRole('dialog').getByRole('button', { name: 'Create organization' }).click();
    await expect.poll(() => page.locator('#claims-role').textContent()).toBe('owner');
    expect((await report(page)).status).toBe(200);
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByLabel('Password').waitFor();
    expect(errors).toEqual([]);
  });
});
