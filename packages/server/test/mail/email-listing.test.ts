import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEmail } from '../../src/mail/outbox.js';
import { renderEmail } from '../../src/mail/templates.js';
import type { Environment } from '../../src/tenancy/settings.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/** The email listings page like every other listing: `cursor` in, `nextCursor` out, null on the last page. */
describe('GET /v1/dev/emails and GET /v1/platform/environments/{environmentId}/emails: paging', () => {
  let t: TestApp;
  let dev: Environment;
  let prod: Environment;
  const sent: string[] = [];

  async function enqueue(environment: Environment, to: string) {
    const rendered = renderEmail({
      kind: 'magic_link',
      projectName: 'Paging',
      logoUrl: null,
      link: `https://example.test/?t=${to}`,
      expiresInMinutes: 10,
    });
    return t.store.db
      .transaction()
      .execute((tx) => enqueueEmail(tx, { environment, kind: 'magic_link', to, rendered, deliver: true, throttled: false }, Date.now()));
  }

  /** Every page of a listing, following nextCursor; the pages' sizes too. */
  async function walk(url: (cursor: string | undefined) => string, credential: string) {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const res = await t.call({ method: 'GET', url: url(cursor), credential });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { data: Array<{ id: string; to: string }>; nextCursor: string | null };
      ids.push(...page.data.map((e) => e.id));
      sizes.push(page.data.length);
      if (page.nextCursor === null) return { ids, sizes };
      cursor = page.nextCursor;
    }
    throw new Error('The listing never ended.');
  }
  const after = (cursor: string | undefined) => (cursor ? `&cursor=${encodeURIComponent(cursor)}` : '');

  beforeAll(async () => {
    t = await startTestApp();
    dev = await t.tenancy.getEnvironment(t.project.development.id);
    prod = await t.tenancy.getEnvironment(t.project.production.id);
    // 45 emails: 5 of them (every third of the first 15) to one address, the rest each to its own, so
    // the per-address throttle (5 in 10 minutes) suppresses none.
    for (let i = 0; i < 45; i++) {
      expect(await enqueue(dev, i % 3 === 0 && i < 15 ? 'many@example.test' : `one${i}@example.test`)).toBe('captured');
    }
    const rows = await t.store.db
      .selectFrom('email_outbox')
      .select('id')
      .where('environment_id', '=', dev.id)
      .orderBy('id', 'desc')
      .execute();
    sent.push(...rows.map((r) => r.id));
  });
  afterAll(() => t.close());

  it('walks every captured email once, newest first, with the secret key', async () => {
    const { ids, sizes } = await walk((c) => `/v1/dev/emails?limit=20${after(c)}`, t.project.development.secretKey);
    expect(sizes).toEqual([20, 20, 5]);
    expect(ids).toEqual(sent);
  });

  it('walks the same outbox through the platform API, and the last full page says so with null', async () => {
    const { ids, sizes } = await walk((c) => `/v1/platform/environments/${dev.id}/emails?limit=15${after(c)}`, t.platformKey);
    expect(ids).toEqual(sent);
    // 45 rows in pages of 15: the third page is the last, and knows it.
    expect(sizes).toEqual([15, 15, 15]);
  });

  it('keeps the recipient filter across pages', async () => {
    const { ids } = await walk((c) => `/v1/dev/emails?to=MANY@example.test&limit=2${after(c)}`, t.project.development.secretKey);
    expect(ids).toHaveLength(5);
    const rows = await t.store.db
      .selectFrom('email_outbox')
      .select('id')
      .where('environment_id', '=', dev.id)
      .where('to_key', '=', 'many@example.test')
      .orderBy('id', 'desc')
      .execute();
    expect(ids).toEqual(rows.map((r) => r.id));
  });

  it("refuses a cursor of another environment's listing, and an altered cursor, as invalid_request", async () => {
    await enqueue(prod, 'prod@example.test');
    const first = await t.call({ method: 'GET', url: `/v1/platform/environments/${dev.id}/emails?limit=1`, credential: t.platformKey });
    const cursor = first.json().nextCursor as string;
    const other = await t.call({
      method: 'GET',
      url: `/v1/platform/environments/${prod.id}/emails?cursor=${encodeURIComponent(cursor)}`,
      credential: t.platformKey,
    });
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ code: 'invalid_request', details: { fields: ['cursor'] } });
    const altered = await t.call({
      method: 'GET',
      url: `/v1/dev/emails?cursor=${encodeURIComponent(`x${cursor}`)}`,
      credential: t.project.development.secretKey,
    });
    expect(altered.statusCode).toBe(400);
    expect(altered.json().error.code).toBe('invalid_request');
  });
});
