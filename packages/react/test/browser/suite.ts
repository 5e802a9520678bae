import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startOidcIdp, type TestOidcIdp } from '../../../server/test/helpers/oidc-idp.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  GOOD_PASSWORD,
  startAppServer,
  startLiveGatehouse,
  uniqueEmail,
  type AppServer,
  type LiveGatehouse,
} from '../helpers.js';

/**
 * Screenshots. screenshots.test.ts writes those docs/react-components.md shows; the other files write
 * the states they reach, to look at. Each name is written by one file only: the files run in parallel.
 */
const SCREENSHOTS = fileURLToPath(new URL('../../../../docs/screenshots/react/', import.meta.url));

export interface ReactSuite {
  live: LiveGatehouse;
  app: AppServer;
  browser: Browser;
  /** Only in a suite started with `{ oidc: true }`. */
  idp: TestOidcIdp;
}

/**
 * For the describe block it is called in: a running Gatehouse, the test application built from the
 * components' source, Chromium, and an OIDC provider when asked for; and the steps the tests share.
 * Each test file has its own, so files run in parallel. `now` is the server's clock (testClock()).
 */
export function reactSuite(options: { oidc?: boolean; now?: () => number } = {}) {
  const suite = {} as ReactSuite;
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    mkdirSync(SCREENSHOTS, { recursive: true });
    const [live, app, browser, idp] = await Promise.all([
      startLiveGatehouse(options.now ? { now: options.now } : {}),
      startAppServer(),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      options.oidc ? startOidcIdp() : undefined,
    ]);
    Object.assign(suite, { live, app, browser, idp });
  }, 60_000);

  afterAll(async () => {
    await suite.browser?.close();
    await suite.idp?.close();
    await suite.app?.close();
    await suite.live?.close();
  });

  async function environment() {
    const project = await suite.live.t.createProject('Acme');
    return project.development;
  }

  async function createUser(env: { secretKey: string }, email = uniqueEmail('react'), extra: Record<string, unknown> = {}) {
    const created = await suite.live.t.call({
      method: 'POST',
      url: '/v1/users',
      credential: env.secretKey,
      payload: { email, password: GOOD_PASSWORD, firstName: 'Ada', lastName: 'Lovelace', ...extra },
    });
    expect(created.statusCode).toBe(201);
    return { email, id: (created.json() as { id: string }).id };
  }

  async function open(env: { publishableKey: string }, view = 'app', theme = 'light'): Promise<Page> {
    const page = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    page.on('pageerror', (error) => console.error('[page error]', error));
    await page.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view, theme }));
    await page.waitForSelector('#status[data-loaded=true]');
    return page;
  }

  /** `fullPage`: the whole page, not only what the 960×720 window shows; `animations`: transitions finished. */
  const shot = (page: Page, name: string, options: { fullPage?: boolean; animations?: 'disabled' } = {}) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), ...options });

  /** Creates an organization through the page's client and makes it active. */
  async function createActiveOrganization(page: Page, name: string) {
    type Client = { organizations: { create(p: object): Promise<{ id: string }> }; setActiveOrganization(id: string): Promise<unknown> };
    await page.evaluate(async (orgName) => {
      const gh = (window as unknown as { gh: Client }).gh;
      await gh.setActiveOrganization((await gh.organizations.create({ name: orgName })).id);
    }, name);
  }

  /** The IdP's login page (any password), then its consent page unless it went straight back. */
  async function throughIdp(page: Page, login: string) {
    await page.waitForURL((url) => url.href.startsWith(suite.idp.issuer));
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any');
    const loginPage = page.url();
    await page.locator('button[type=submit]').first().click();
    await page.waitForURL((url) => url.href !== loginPage);
    if (page.url().startsWith(suite.idp.issuer)) await page.locator('button[type=submit]').first().click();
  }

  async function signInWithPassword(page: Page, email: string, password = GOOD_PASSWORD) {
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
  }

  return { suite, environment, createUser, open, shot, createActiveOrganization, throughIdp, signInWithPassword };
}
