import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable } from '../../js/test/helpers/browser.js';
import { startOAuth2Server } from '../../server/test/helpers/oauth2-server.js';
import { SoftAuthenticator } from '../../server/test/helpers/webauthn.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../../server/test/helpers/process.js';
import { assertConsoleBuilt, platformKey, SCREENSHOTS } from './helpers.js';

const PASSWORD = 'correct horse battery staple';

/** The console in Chromium against a real server started as `npm start` starts it (SQLite, fresh data directory). */
describe.skipIf(!chromiumAvailable())('the console', () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let dataDir: string;
  const state = { projectId: '', publishableKey: '', environmentId: '', userEmail: '', refreshToken: '' };

  const api = async (path: string, init: RequestInit & { credential?: string | undefined } = {}) => {
    const { credential, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (credential) headers.set('authorization', `Bearer ${credential}`);
    if (rest.body) headers.set('content-type', 'application/json');
    // Node's fetch sends no Origin: a backend's call.
    return fetch(`${base}${path}`, { ...rest, headers });
  };
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const tab = (name: string) => page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name });

  beforeAll(async () => {
    assertConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    dataDir = mkdtempSync(join(os.tmpdir(), 'gatehouse-console-'));
    const port = await freePort();
    base = `http://localhost:${port}`;
    [server, browser] = await Promise.all([
      startServerProcess({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir }),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    if (server) await stopServerProcess(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates the first operator from the setup link printed at start', async () => {
    expect(server.output).toContain(`Console:       ${base}/console`);
    const link = /(http:\/\/\S+\/console\/setup\?token=\S+)/.exec(server.output)?.[1];
    expect(link).toBeDefined();
    await page.goto(link!);
    await page.getByLabel('Email').fill('ops@example.com');
    await page.getByLabel('First name (optional)').fill('Ada');
    await page.getByLabel('Password').fill(PASSWORD);
    await shot('setup');
    await page.getByRole('button', { name: 'Create operator and sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    // The link's token left the address bar, and the link is spent.
    expect(page.url()).toBe(`${base}/console#/`);
    const again = await api('/v1/console/setup', { method: 'POST', body: JSON.stringify({ token: new URL(link!).searchParams.get('token'), email: 'x@example.com', password: PASSWORD }) });
    expect(again.status).toBe(401);
  });

  it('creates a project', async () => {
    await page.getByLabel('Name').fill('Acme');
    await page.getByRole('button', { name: 'Create project' }).click();
    const callout = page.getByRole('status').filter({ hasText: 'was created' });
    await callout.waitFor();
    await page.getByRole('cell', { name: 'Acme', exact: true }).waitFor();
    await shot('projects');
    await page.getByRole('link', { name: 'Open Acme' }).click();
    await page.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    state.projectId = /#\/projects\/(proj_[^/]+)/.exec(page.url())?.[1] ?? '';
    expect(state.projectId).toMatch(/^proj_/);
  });

  it('copies the publishable key, which then works', async () => {
    await page.getByText('Publishable key', { exact: true }).waitFor();
    await page.locator('.copyable').first().getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    state.publishableKey = await page.evaluate(() => navigator.clipboard.readText());
    expect(state.publishableKey).toMatch(/^pk_test_/);
    const environment = await api('/v1/environment', { credential: state.publishableKey });
    expect(environment.status).toBe(200);
    const body = (await environment.json()) as { id: string; type: string };
    expect(body.type).toBe('development');
    state.environmentId = body.id;
    await shot('keys');
  });

  it('turns magic link off, and GET /v1/environment says so', async () => {
    const before = (await (await api('/v1/environment', { credential: state.publishableKey })).json()) as { authMethods: { magicLink: boolean } };
    expect(before.authMethods.magicLink).toBe(true);
    // A proxy TRUST_PROXY does not name (this test's fetch comes from loopback) is shown on the page.
    await api('/v1/environment', { credential: state.publishableKey, headers: { 'x-forwarded-for': '198.51.100.7' } });
    await tab('Settings').click();
    await page.getByRole('note', { name: 'Proxy warning' }).filter({ hasText: 'TRUST_PROXY is unset' }).waitFor();
    // The preview shows the methods in force: a magic link option while it is on.
    const preview = page.locator('.preview');
    await preview.getByRole('button', { name: /email link|magic link|sign-in link/i }).first().waitFor();
    await page.getByLabel('Magic link').uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const after = (await (await api('/v1/environment', { credential: state.publishableKey })).json()) as { authMethods: { magicLink: boolean } };
    expect(after.authMethods.magicLink).toBe(false);
    await preview.getByRole('button', { name: /email link|magic link|sign-in link/i }).first().waitFor({ state: 'detached' });
    await preview.getByLabel(/password/i).first().waitFor();
    await preview.getByRole('button', { name: /email me a code/i }).waitFor();
    await shot('settings');
    // A server refusal is shown as its message.
    await page.getByLabel('Access token lifetime (s, 30–3600)').fill('5');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'accessTokenTtlSeconds' }).waitFor();
  });

  it('creates a secret key shown once, and revokes it', async () => {
    await tab('Keys').click();
    await page.getByRole('button', { name: 'Create secret key' }).click();
    const secret = (await page.getByTestId('New secret key').textContent())!;
    expect(secret).toMatch(/^sk_test_/);
    expect((await api('/v1/users', { credential: secret })).status).toBe(200);
    await shot('secret-key-created');
    const hint = secret.slice(-4);
    const row = page.getByRole('row').filter({ hasText: `…${hint}` });
    const dialog = page.getByRole('dialog', { name: `Revoke key …${hint}` });
    // By keyboard: Enter opens the confirmation with Cancel focused, Escape backs out.
    await row.getByRole('button', { name: 'Revoke' }).focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('/v1/users', { credential: secret })).status).toBe(200);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await dialog.waitFor();
    await shot('secret-key-revoke-confirm');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^Revoked/).waitFor();
    expect((await api('/v1/users', { credential: secret })).status).toBe(401);
  });

  it("finds a user and revokes their sessions", async () => {
    // A user who signs in (their session counts them in this month's active users).
    const email = 'grace@example.com';
    const created = await api(`/v1/platform/environments/${state.environmentId}/users`, {
      method: 'POST',
      credential: platformKey(server.output),
      body: JSON.stringify({ email, password: PASSWORD, firstName: 'Grace' }),
    });
    expect(created.status).toBe(201);
    const userId = ((await created.json()) as { id: string }).id;
    const org = await api(`/v1/platform/environments/${state.environmentId}/organizations`, {
      method: 'POST',
      credential: platformKey(server.output),
      body: JSON.stringify({ name: 'Grace Labs', ownerId: userId }),
    });
    expect(org.status).toBe(201);
    const signIn = await api('/v1/auth/signin', { method: 'POST', credential: state.publishableKey, body: JSON.stringify({ email, password: PASSWORD }) });
    expect(signIn.status).toBe(200);
    state.refreshToken = ((await signIn.json()) as { session: { refreshToken: string } }).session.refreshToken;
    state.userEmail = email;

    await tab('Users').click();
    await page.getByLabel('Search by email, name or username').fill('grace');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: email }).click();
    await page.getByRole('heading', { name: email }).waitFor();
    await page.getByRole('cell', { name: /^sess_/ }).waitFor();
    await page.getByRole('button', { name: 'Revoke all sessions' }).click();
    await page.getByRole('dialog', { name: 'Revoke all sessions' }).getByRole('button', { name: 'Revoke all sessions' }).click();
    await page.getByText('Revoked 1 session.').waitFor();
    await page.getByText('No live session.').waitFor();
    await page.getByText('No connected account.').waitFor();
    await shot('user');
    const refresh = await api('/v1/auth/refresh', { method: 'POST', credential: state.publishableKey, body: JSON.stringify({ refreshToken: state.refreshToken }) });
    expect(refresh.status).toBe(401);
  });

  it("shows a user's connected accounts (a social sign-in through a plain OAuth 2.0 provider) and unlinks one", async () => {
    const provider = await startOAuth2Server({ clientId: 'console-client', clientSecret: 'console-secret', authMethod: 'client_secret_basic' });
    try {
      const platform = { credential: platformKey(server.output) };
      const environmentPath = `/v1/platform/environments/${state.environmentId}`;
      expect((await api(environmentPath, { ...platform, method: 'PATCH', body: JSON.stringify({ authMethods: { password: true, magicLink: true, emailCode: true, sso: true } }) })).status).toBe(200);
      const created = await api(`${environmentPath}/sso-connections`, {
        ...platform,
        method: 'POST',
        body: JSON.stringify({
          type: 'oauth2',
          name: 'Acme ID',
          domains: [],
          authorizationUrl: `${provider.base}/authorize`,
          tokenUrl: `${provider.base}/token`,
          userinfoUrl: `${provider.base}/userinfo`,
          clientId: 'console-client',
          clientSecret: 'console-secret',
          userinfoFields: { id: 'id', email: 'email' },
        }),
      });
      expect(created.status).toBe(201);
      const connectionId = ((await created.json()) as { id: string }).id;
      const email = 'sol@example.com';
      provider.signInAs({ id: 'acme-7', email });
      const started = await api('/v1/auth/sso/start', { method: 'POST', credential: state.publishableKey, body: JSON.stringify({ connectionId, redirectUrl: `${base}/v1/health` }) });
      expect(started.status).toBe(200);
      const authorize = await fetch(((await started.json()) as { url: string }).url, { redirect: 'manual' });
      const callback = await fetch(authorize.headers.get('location')!, { redirect: 'manual' });
      expect(new URL(callback.headers.get('location')!).searchParams.get('token')).toBeTruthy();

      await tab('Users').click();
      await page.getByLabel('Search by email, name or username').fill('sol');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: email }).click();
      await page.getByRole('heading', { name: 'Connected accounts' }).waitFor();
      await page.getByRole('cell', { name: email }).waitFor();
      await page.getByRole('cell', { name: 'oauth2' }).waitFor();
      await shot('user-connected-accounts');
      // The only way in of this user (no password, an address nobody verified): unlinking is refused.
      await page.getByRole('button', { name: 'Unlink' }).click();
      const dialog = page.getByRole('dialog', { name: 'Unlink this account' });
      await dialog.getByRole('button', { name: 'Unlink' }).click();
      await dialog.getByText('This is the last way to sign in').waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('cell', { name: email }).waitFor();
    } finally {
      await provider.close();
    }
  });

  it('reads a captured email and follows its link', async () => {
    const sent = await api('/v1/auth/password-reset', {
      method: 'POST',
      credential: state.publishableKey,
      body: JSON.stringify({ email: state.userEmail, redirectUrl: `${base}/v1/health` }),
    });
    expect(sent.status).toBe(202);
    await tab('Inbox').click();
    await page.getByRole('button', { name: /Reset your Acme password/ }).click();
    const link = page.locator('a.email-link').first();
    await link.waitFor();
    await page.frameLocator('iframe.email-frame').getByText(/choose a new password/).waitFor();
    await shot('inbox');
    const [popup] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await popup.waitForLoadState();
    const token = new URL(popup.url()).searchParams.get('token');
    expect(token).toBeTruthy();
    await popup.close();
    const reset = await api('/v1/auth/password-reset/complete', {
      method: 'POST',
      credential: state.publishableKey,
      body: JSON.stringify({ token, newPassword: 'another long passphrase' }),
    });
    expect(reset.status).toBe(200);
  });

  it("draws the month's active users", async () => {
    await tab('Usage').click();
    const month = new Date().toISOString().slice(0, 7);
    const bar = page.locator(`svg[data-chart="mau"] rect[data-month="${month}"][data-type="development"]`);
    await bar.waitFor();
    expect(await bar.getAttribute('data-value')).toBe('1');
    expect(Number(await bar.getAttribute('height'))).toBeGreaterThan(0);
    await page.locator('svg[data-chart="requests"] polyline').first().waitFor();
    await shot('usage');
  });

  // After the active-users chart: this user's sign-in would count in it.
  it("lists a user's passkeys and removes one", async () => {
    const platform = { credential: platformKey(server.output) };
    const environmentPath = `/v1/platform/environments/${state.environmentId}`;
    expect((await api(environmentPath, { ...platform, method: 'PATCH', body: JSON.stringify({ authMethods: { passkey: true } }) })).status).toBe(200);
    const email = 'ada.passkey@example.com';
    expect((await api(`${environmentPath}/users`, { ...platform, method: 'POST', body: JSON.stringify({ email, password: PASSWORD }) })).status).toBe(201);
    const signIn = await api('/v1/auth/signin', { method: 'POST', credential: state.publishableKey, body: JSON.stringify({ email, password: PASSWORD }) });
    const accessToken = ((await signIn.json()) as { session: { accessToken: string } }).session.accessToken;
    // A passkey made on a development page (RP ID localhost) by a software authenticator.
    const origin = 'http://localhost:3000';
    const authenticator = new SoftAuthenticator(origin);
    const started = await api('/v1/me/passkeys/registration', { method: 'POST', credential: accessToken, headers: { origin } });
    expect(started.status).toBe(200);
    const { options } = (await started.json()) as { options: unknown };
    const registered = await api('/v1/me/passkeys', {
      method: 'POST',
      credential: accessToken,
      headers: { origin },
      body: JSON.stringify({ response: authenticator.create(options), name: 'Ada’s phone' }),
    });
    expect(registered.status).toBe(201);

    await tab('Users').click();
    await page.getByLabel('Search by email, name or username').fill('ada.passkey');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: email }).click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByRole('cell', { name: 'Ada’s phone' }).waitFor();
    await shot('user-passkeys');
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog', { name: 'Remove this passkey' }).getByRole('button', { name: 'Remove passkey' }).click();
    await page.getByText('No passkey.').waitFor();
    const left = await api('/v1/me/passkeys', { credential: accessToken });
    expect(((await left.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('shows the other pages, at desktop and phone width', async () => {
    await tab('Organizations').click();
    await page.getByRole('heading', { name: 'Roles and permissions' }).waitFor();
    await shot('organizations');
    await page.getByRole('link', { name: 'Grace Labs' }).click();
    await page.getByRole('cell', { name: 'grace@example.com' }).waitFor();
    await page.getByLabel('Email').fill('lin@example.com');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('cell', { name: 'lin@example.com' }).waitFor();
    await shot('organization');

    await tab('Webhooks').click();
    await page.getByLabel('URL').fill('http://localhost:9/hooks/gatehouse');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(page.getByTestId('Webhook signing secret').textContent()).resolves.toMatch(/^whsec_/);
    await page.getByRole('link', { name: 'http://localhost:9/hooks/gatehouse' }).waitFor();
    await shot('webhooks');
    await tab('SSO').click();
    await page.getByRole('heading', { name: 'Add a connection' }).waitFor();
    await shot('sso');
    await tab('Branding & project').click();
    await page.getByRole('heading', { name: 'Logo' }).waitFor();
    await shot('branding');
    await page.getByRole('link', { name: 'Production' }).click();
    await tab('Outbox').click();
    await page.getByRole('heading', { name: 'Outbox' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Operators' }).click();
    await page.getByRole('heading', { name: 'Invite an operator' }).waitFor();
    // An operator invites another, who accepts in a browser of their own.
    await page.getByLabel('Email').fill('lin.ops@example.com');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const invitation = (await page.getByTestId('Invitation link').textContent())!;
    expect(invitation).toContain('/console/setup?token=gh_invite_');
    await shot('operators');
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const invitee = await other.newPage();
    await invitee.goto(invitation);
    await invitee.getByRole('heading', { name: 'Accept your operator invitation' }).waitFor();
    await invitee.getByLabel('Password').fill(PASSWORD);
    await invitee.getByRole('button', { name: 'Create operator and sign in' }).click();
    await invitee.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await invitee.getByRole('link', { name: 'Acme' }).waitFor();
    await other.close();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('cell', { name: 'ops@example.com' }).first().waitFor();
    await shot('audit-log');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/console#/projects/${state.projectId}/development/keys`);
    await page.getByText('Publishable key', { exact: true }).waitFor();
    // Measured once both tables are drawn: the widest content of the page.
    await page.locator('th', { hasText: 'Status' }).waitFor();
    await page.locator('th', { hasText: 'Published until' }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (overflow > 0) {
      console.log(await page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => { if (e.getBoundingClientRect().right <= innerWidth + 1) return false; for (let p = e.parentElement; p; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible') return false; return true; }).slice(0, 8).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`).join('\n')));
    }
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('phone-keys');
  });
});
