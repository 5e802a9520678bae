import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable } from '../../js/test/helpers/browser.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../../server/test/helpers/process.js';
import { assertConsoleBuilt, platformKey, SCREENSHOTS } from './helpers.js';

const PASSWORD = 'correct horse battery staple';
const range = (count: number) => Array.from({ length: count }, (_, i) => i);
const pad = (i: number) => String(i).padStart(3, '0');

/**
 * Every listing of the console reaches every row, past the 100 a request of the platform API can
 * answer: more than 100 rows of each kind are made through the API, then walked in the browser.
 */
describe.skipIf(!chromiumAvailable())('the console lists every row', () => {
  let server: ServerProcess;
  let receiver: Server;
  let browser: Browser;
  let page: Page;
  let base: string;
  let dataDir: string;
  let key: string;
  const made = { projectId: '', environmentId: '', endpointId: '', organizationIds: [] as string[] };

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  /** Every row of a paged listing, through the API (its own nextCursor walk). */
  const everyRow = async <T>(path: string): Promise<T[]> => {
    const rows: T[] = [];
    let cursor: string | null = null;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const page: { data: T[]; nextCursor: string | null } = await api(
        'GET',
        `${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      rows.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
    return rows;
  };
  /** Runs `make` for each index, ten at a time. */
  const inBatches = async <T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> => {
    const results: T[] = [];
    for (let start = 0; start < count; start += 10)
      results.push(...(await Promise.all(range(Math.min(10, count - start)).map((i) => make(start + i)))));
    return results;
  };
  /** The window's view (long listings make huge full-page images): at the page controls, or at the top. */
  const shot = async (name: string, at: 'bottom' | 'top' = 'bottom') => {
    await page.evaluate((end) => scrollTo(0, end ? document.documentElement.scrollHeight : 0), at === 'bottom');
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  };
  const section = (title: string) => page.locator('section.card').filter({ has: page.getByRole('heading', { name: title, exact: true }) });
  const env = () => `/v1/platform/environments/${made.environmentId}`;
  /** Opens a page of the console afresh (a change of the fragment alone keeps what a page loaded before). */
  const open = async (...route: string[]) => {
    await page.goto(`${base}/console#/${route.join('/')}`);
    await page.reload();
  };

  /**
   * The texts of `cell` in every row (`rows`: of the table) in `within`, page after page: clicks
   * `next` until it is gone.
   */
  const walk = async (within: Locator, cell: string, next = 'Next', rows = 'tbody tr'): Promise<string[]> => {
    const seen: string[] = [];
    for (let pages = 0; pages < 100; pages++) {
      await within.locator(`${rows} ${cell}`).first().waitFor();
      const texts = await within.locator(`${rows} ${cell}`).allTextContents();
      seen.push(...texts);
      const button = within.getByRole('button', { name: next, exact: true });
      if ((await button.count()) === 0) return seen;
      // The page's rows leave while the next loads: wait for its first row to go, not for new text.
      const first = await within.locator(rows).first().elementHandle();
      await button.click();
      await page.waitForFunction((row) => !row?.isConnected, first);
    }
    throw new Error(`more than 100 pages: the ${next} button never went away`);
  };

  beforeAll(async () => {
    assertConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    dataDir = mkdtempSync(join(os.tmpdir(), 'gatehouse-console-lists-'));
    const [port, hookPort] = await Promise.all([freePort(), freePort()]);
    base = `http://localhost:${port}`;
    // The webhook receiver: takes every delivery.
    receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(hookPort, '127.0.0.1', resolve));
    [server, browser] = await Promise.all([
      startServerProcess({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir }),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
    key = platformKey(server.output);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const link = /(http:\/\/\S+\/console\/setup\?token=\S+)/.exec(server.output)![1]!;
    await page.goto(link);
    await page.getByLabel('Email').fill('ops@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create operator and sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

    // 120 projects; the first holds everything else, in its development environment.
    const projects = await inBatches(120, (i) =>
      api<{ id: string; environments: Array<{ id: string; type: string }> }>('POST', '/v1/platform/projects', {
        name: `Project ${pad(i)}`,
      }),
    );
    made.projectId = projects[0]!.id;
    made.environmentId = projects[0]!.environments.find((e) => e.type === 'development')!.id;
    // The endpoint whose deliveries are listed hears of organizations only; the 120 others never hear anything.
    made.endpointId = (
      await api<{ id: string }>('POST', `${env()}/webhook-endpoints`, {
        url: `http://127.0.0.1:${hookPort}/deliveries`,
        eventTypes: ['organization.created'],
      })
    ).id;
    await inBatches(120, (i) =>
      api('POST', `${env()}/webhook-endpoints`, { url: `http://localhost:9/hooks/${pad(i)}`, eventTypes: ['user.deleted'] }),
    );
    // 250 users in one import.
    const imported = await api<{ data: Array<{ user?: { id: string } }> }>('POST', `${env()}/users/import`, {
      users: range(250).map((i) => ({ email: `user${pad(i)}@example.com`, firstName: `User ${pad(i)}` })),
    });
    const userIds = imported.data.map((row) => row.user!.id);
    // 150 organizations, owned by the first user; the first has 121 members.
    made.organizationIds = (
      await inBatches(150, (i) => api<{ id: string }>('POST', `${env()}/organizations`, { name: `Org ${pad(i)}`, ownerId: userIds[0] }))
    ).map((o) => o.id);
    await inBatches(120, (i) =>
      api('POST', `${env()}/organizations/${made.organizationIds[0]}/members`, { userId: userIds[i + 1], role: 'member' }),
    );
    // 120 emails: invitations of two organizations (an organization sends at most 100 an hour).
    await inBatches(120, (i) =>
      api('POST', `${env()}/organizations/${made.organizationIds[1 + (i % 2)]}/invitations`, {
        email: `invitee${pad(i)}@example.com`,
        role: 'member',
      }),
    );
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServerProcess(server);
    receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists all 121 projects', async () => {
    const expected = (await everyRow<{ name: string }>('/v1/platform/projects')).map((p) => p.name);
    // A fresh install's Default project, and the 120.
    expect(expected).toHaveLength(121);
    expect(expected).toEqual(expect.arrayContaining(range(120).map((i) => `Project ${pad(i)}`)));
    await open('projects');
    const seen = await walk(section('All projects'), 'td:first-child');
    expect(seen.sort()).toEqual(expected.sort());
    await shot('list-projects');
  });

  it('lists all 250 users', async () => {
    await open('projects', made.projectId, 'development', 'users');
    const seen = await walk(section('Users'), 'td:first-child');
    expect(seen.sort()).toEqual(range(250).map((i) => `user${pad(i)}@example.com`));
    await shot('list-users');
    // A search starts again at its first page.
    await page.getByLabel('Search by email, name or username').fill('user24');
    await page.getByRole('button', { name: 'Search' }).click();
    const found = await walk(section('Users'), 'td:first-child');
    expect(found.sort()).toEqual(range(10).map((i) => `user${pad(240 + i)}@example.com`));
  });

  it('lists all 150 organizations, and all 121 members of one', async () => {
    await open('projects', made.projectId, 'development', 'organizations');
    const seen = await walk(section('Organizations'), 'td:first-child');
    expect(seen.sort()).toEqual(range(150).map((i) => `Org ${pad(i)}`));
    await shot('list-organizations');
    await open('projects', made.projectId, 'development', 'organizations', made.organizationIds[0]!);
    const members = await walk(section('Members of Org 000'), 'td:first-child');
    expect(members.sort()).toEqual(range(121).map((i) => `user${pad(i)}@example.com`));
  });

  it('lists all 121 webhook endpoints, and every delivery of one', async () => {
    await open('projects', made.projectId, 'development', 'webhooks');
    const endpoints = await walk(section('Endpoints'), 'td:first-child');
    expect(endpoints).toHaveLength(121);
    expect(endpoints.filter((url) => url.startsWith('http://localhost:9/hooks/')).sort()).toEqual(
      range(120).map((i) => `http://localhost:9/hooks/${pad(i)}`),
    );
    // Each organization's creation is one event, delivered once to a receiver that takes it.
    const deliveries = `${env()}/webhook-endpoints/${made.endpointId}/deliveries`;
    await expect
      .poll(async () => (await everyRow<{ status: string }>(deliveries)).filter((d) => d.status === 'succeeded').length, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe(150);
    const messages = (await everyRow<{ messageId: string }>(deliveries)).map((d) => d.messageId);
    await open('projects', made.projectId, 'development', 'webhooks', made.endpointId);
    const seen = await walk(section('Deliveries'), 'td:first-child .muted', 'Older');
    expect(seen.sort()).toEqual(messages.sort());
    expect(new Set(seen).size).toBe(150);
    await shot('list-deliveries');
  }, 90_000);

  it('lists every audit entry', async () => {
    const entries = await everyRow<{ action: string; target: string | null }>('/v1/platform/audit-log');
    expect(entries.length).toBeGreaterThan(500);
    await open('audit');
    const within = section('Changes made through the platform API');
    const seen = await walk(within, 'td:nth-child(4)', 'Older');
    expect(seen).toEqual(entries.map((e) => e.target ?? '—'));
    await shot('list-audit-log');
  });

  it('lists all 120 emails, a page at a time, and filters them by recipient', async () => {
    const newestFirst = (await everyRow<{ to: string }>(`${env()}/emails`)).map((e) => e.to);
    expect([...newestFirst].sort()).toEqual(range(120).map((i) => `invitee${pad(i)}@example.com`));
    await open('projects', made.projectId, 'development', 'emails');
    const inbox = section('Inbox (captured, never sent)');
    const seen = await walk(inbox, '.list-item .muted', 'Older', 'ul[aria-label="Emails"] > li');
    // Newest first across the pages, each email once.
    expect(seen.map((text) => /^to (\S+)/.exec(text)![1])).toEqual(newestFirst);
    await shot('list-emails');
    // The oldest, found by its recipient from the first page, opens like any other.
    const oldest = newestFirst.at(-1)!;
    await page.getByLabel('Recipient address').fill(oldest);
    await page.getByRole('button', { name: 'Filter' }).click();
    const list = page.getByRole('list', { name: 'Emails' });
    await list.getByRole('listitem').filter({ hasText: `to ${oldest}` }).waitFor();
    expect(await list.getByRole('listitem').count()).toBe(1);
    expect(await inbox.getByRole('button', { name: 'Older', exact: true }).count()).toBe(0);
    await list.getByRole('button', { name: /You are invited to join/ }).click();
    await page.getByRole('heading', { name: /You are invited to join/, level: 2 }).waitFor();
    await page.locator('a.email-link').first().waitFor();
  });
});
