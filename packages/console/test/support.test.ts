import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable } from '../../js/test/helpers/browser.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../../server/test/helpers/process.js';
import { assertConsoleBuilt, platformKey, SCREENSHOTS } from './helpers.js';

const PASSWORD = 'correct horse battery staple';
// RFC 6238's test secret, base32: the user has TOTP, as an import would give it.
const TOTP_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

/** Support work in the console: a user's second factors and their reset, API keys, impersonation, machines, an organization's MFA rule. */
describe.skipIf(!chromiumAvailable())('the console: support', () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let base: string;
  let dataDir: string;
  let key: string;
  const made = { projectId: '', environmentId: '', userId: '', organizationId: '', apiKeySecret: '' };

  const call = async (method: string, path: string, body?: unknown, credential = key) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await call(method, path, body);
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  const env = () => `/v1/platform/environments/${made.environmentId}`;
  const open = async (...route: string[]) => {
    await page.goto(`${base}/console#/${route.join('/')}`);
    await page.reload();
  };
  const section = (title: string) => page.locator('section.card').filter({ has: page.getByRole('heading', { name: title, exact: true }) });
  const shot = (target: Page, name: string) => target.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    assertConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    dataDir = mkdtempSync(join(os.tmpdir(), 'gatehouse-console-support-'));
    const port = await freePort();
    base = `http://localhost:${port}`;
    [server, browser] = await Promise.all([
      startServerProcess({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir }),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
    key = platformKey(server.output);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    const link = /(http:\/\/\S+\/console\/setup\?token=\S+)/.exec(server.output)![1]!;
    await page.goto(link);
    await page.getByLabel('Email').fill('ops@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create operator and sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

    const project = await api<{ id: string; environments: Array<{ id: string; type: string }> }>('POST', '/v1/platform/projects', { name: 'Acme' });
    made.projectId = project.id;
    made.environmentId = project.environments.find((e) => e.type === 'development')!.id;
    made.userId = (
      await api<{ id: string }>('POST', `${env()}/users`, { email: 'grace@example.com', password: PASSWORD, firstName: 'Grace', lastName: 'Hopper', totpSecret: TOTP_SECRET })
    ).id;
    made.apiKeySecret = (await api<{ secret: string }>('POST', `${env()}/api-keys`, { subject: made.userId, name: 'ci-deploy', scopes: ['deploy:write'] })).secret;
    made.organizationId = (await api<{ id: string }>('POST', `${env()}/organizations`, { name: 'Hopper Labs', ownerId: made.userId })).id;
    await api('PATCH', `${env()}/organizations/${made.organizationId}`, { mfaRequired: true });
    await api('POST', `${env()}/api-keys`, { subject: made.organizationId, name: 'org-reporting' });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (server) await stopServerProcess(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("shows a user's second factors and API keys; revokes a key and resets MFA after a confirmation", async () => {
    await open('projects', made.projectId, 'development', 'users', made.userId);
    const factors = section('Second factors');
    await factors.getByTestId('second-factors').getByText(/^Enabled/).first().waitFor();
    expect(await factors.getByTestId('second-factors').textContent()).toMatch(/Authenticator app \(TOTP\)Enabled.*Backup codes left0Passkeys0/);
    const keys = section('API keys');
    await keys.getByRole('cell', { name: /ci-deploy/ }).waitFor();
    expect(await keys.textContent()).toContain('deploy:write');
    await shot(page, 'user-security');

    await keys.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog', { name: 'Revoke API key ci-deploy' }).getByRole('button', { name: 'Revoke key' }).click();
    await keys.getByText('No API key.').waitFor();
    expect((await call('POST', `${env()}/api-keys/verify`, { secret: made.apiKeySecret })).status).toBe(401);

    await factors.getByRole('button', { name: 'Reset MFA' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset second factors' });
    await dialog.waitFor();
    await shot(page, 'user-reset-mfa-confirm');
    await dialog.getByRole('button', { name: 'Reset MFA' }).click();
    await factors.getByText('Second factors removed; the user was signed out everywhere.').waitFor();
    await factors.getByText('Not set up').waitFor();
    const status = await api<{ totp: { enabled: boolean } }>('GET', `${env()}/users/${made.userId}/mfa`);
    expect(status.totp.enabled).toBe(false);
  });

  it('impersonates the user: a new tab signs in as them on the hosted page, with the banner, and the audit log records it', async () => {
    await open('projects', made.projectId, 'development', 'users', made.userId);
    const impersonate = section('Impersonate');
    const [tab] = await Promise.all([page.context().waitForEvent('page'), impersonate.getByRole('button', { name: 'Impersonate' }).click()]);
    await tab.waitForURL((url) => url.pathname === `/hosted/${made.environmentId}/user`);
    const banner = tab.locator('[data-gh-component=impersonation-banner]');
    // The banner shows the user id at once, and the name when the user's record has loaded.
    await banner.getByText('Grace Hopper').waitFor();
    expect(await banner.textContent()).toMatch(/^You are signed in as Grace Hopper, impersonated by user_\S+Sign out$/);
    await shot(tab, 'impersonation-hosted');
    await tab.close();
    await impersonate.getByRole('link', { name: 'Open as grace@example.com' }).waitFor();
    await shot(page, 'user-impersonate');
    // The user's sessions show which one is impersonated.
    await page.reload();
    await section('Sessions and access').getByText(/impersonated by user_/).waitFor();
    const log = await api<{ data: Array<{ action: string; actor: { kind: string; email: string | null } }> }>('GET', '/v1/platform/audit-log?limit=20');
    expect(log.data.find((e) => e.action.startsWith('actor_token.created'))?.actor).toMatchObject({ kind: 'operator', email: 'ops@example.com' });
    expect(log.data.some((e) => e.action.startsWith('actor_token.redeemed'))).toBe(true);
  });

  it("shows an organization's MFA rule and its API keys", async () => {
    await open('projects', made.projectId, 'development', 'organizations', made.organizationId);
    await page.getByTestId('mfa-required').getByText(/^Yes/).waitFor();
    await section('API keys').getByRole('cell', { name: /org-reporting/ }).waitFor();
    await shot(page, 'organization-security');
  });

  it('creates a machine (secret shown once), rotates its secret, and deletes it', async () => {
    await open('projects', made.projectId, 'development', 'machines');
    await page.getByLabel('Name').fill('billing-worker');
    await page.getByLabel('Scopes (space-separated)').fill('invoices:read invoices:write');
    await page.getByRole('button', { name: 'Create machine' }).click();
    const clientId = (await page.getByTestId('Client id').textContent())!;
    const first = (await page.getByTestId('Client secret').textContent())!;
    expect(clientId).toMatch(/^mch_/);
    expect(first).toMatch(/^gh_mch_/);
    const token = (secret: string) =>
      fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
      });
    expect((await token(first)).status).toBe(200);
    await page.getByRole('row').filter({ hasText: 'billing-worker' }).getByText('invoices:read invoices:write').waitFor();
    await shot(page, 'machines');

    await page.getByRole('row').filter({ hasText: 'billing-worker' }).getByRole('button', { name: 'New secret' }).click();
    await page.getByText(/^New secret for/).waitFor();
    const second = (await page.getByTestId('Client secret').textContent())!;
    expect(second).not.toBe(first);
    expect((await token(first)).status).toBe(401);
    expect((await token(second)).status).toBe(200);

    await page.getByRole('row').filter({ hasText: 'billing-worker' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete machine billing-worker' }).getByRole('button', { name: 'Delete machine' }).click();
    await page.getByText('No machine yet.').waitFor();
    expect((await token(second)).status).toBe(401);
  });
});
