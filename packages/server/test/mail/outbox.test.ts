import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue, enqueueEmail, isThrottled, THROTTLE, type EnqueueInput } from '../../src/mail/outbox.js';
import { renderEmail } from '../../src/mail/templates.js';
import { SmtpTransport, UnconfiguredTransport } from '../../src/mail/transport.js';
import { OutboxWorker } from '../../src/mail/worker.js';
import type { Environment } from '../../src/tenancy/settings.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

/** Enqueues as a flow does: the throttle is read in the same transaction. */
function enqueueIn(t: TestApp, input: Omit<EnqueueInput, 'throttled'>, now: number) {
  return t.store.db
    .transaction()
    .execute(async (tx) => enqueueEmail(tx, { ...input, throttled: await isThrottled(tx, input.environment.id, input.to, now) }, now));
}

function message(link: string) {
  return renderEmail({ kind: 'magic_link', projectName: 'Test project', logoUrl: null, link, expiresInMinutes: 10 });
}

describe('email outbox', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let dev: Environment;
  let prod: Environment;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ mail: { transport: new SmtpTransport(smtp.url, 'auth@gatehouse.test') } });
    dev = await t.tenancy.getEnvironment(t.project.development.id);
    prod = await t.tenancy.getEnvironment(t.project.production.id);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const enqueue = (environment: Environment, to: string, now = Date.now(), deliver = true) =>
    enqueueIn(t, { environment, kind: 'magic_link', to, rendered: message(`https://example.test/cb?token=${to}`), deliver }, now);

  it('captures development mail and shows it at GET /v1/dev/emails, newest first, filterable by recipient', async () => {
    expect(await enqueue(dev, 'ada@example.test')).toBe('captured');
    expect(await enqueue(dev, 'bob@example.test')).toBe('captured');
    const all = await t.call({ method: 'GET', url: '/v1/dev/emails', credential: t.project.development.secretKey });
    expect(all.statusCode).toBe(200);
    expect(
      all
        .json()
        .data.map((e: { to: string }) => e.to)
        .slice(0, 2),
    ).toEqual(['bob@example.test', 'ada@example.test']);
    const filtered = await t.call({
      method: 'GET',
      url: '/v1/dev/emails?to=ada@EXAMPLE.test',
      credential: t.project.development.secretKey,
    });
    expect(filtered.json().data).toHaveLength(1);
    expect(filtered.json().data[0]).toMatchObject({
      to: 'ada@example.test',
      kind: 'magic_link',
      subject: 'Sign in to Test project',
      text: expect.stringContaining('https://example.test/cb?token=ada@example.test'),
      html: expect.stringContaining('<a href='),
      createdAt: expect.any(Number),
    });
    await t.app.outbox.drain();
    expect(smtp.received).toHaveLength(0);
  });

  it('has no outbox in production (404) and refuses a publishable key', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/dev/emails', credential: t.project.production.secretKey });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toContain('only in development');
    const pk = await t.call({ method: 'GET', url: '/v1/dev/emails', credential: t.project.development.publishableKey });
    expect(pk.statusCode).toBe(403);
  });

  it('delivers production mail over real SMTP outside the request, to exactly the one recipient', async () => {
    expect(await enqueue(prod, 'carol@example.test')).toBe('pending');
    expect(smtp.received.filter((m) => m.rcptTo.includes('carol@example.test'))).toHaveLength(0);
    await t.app.outbox.drain();
    const mail = smtp.received.filter((m) => m.rcptTo.includes('carol@example.test'));
    expect(mail).toHaveLength(1);
    expect(mail[0]!.rcptTo).toEqual(['carol@example.test']);
    expect(mail[0]!.mailFrom).toBe('auth@gatehouse.test');
    expect(mail[0]!.subject).toBe('Sign in to Test project');
    expect(mail[0]!.decoded).toContain('https://example.test/cb?token=carol@example.test');

    const view = await t.call({
      method: 'GET',
      url: `/v1/platform/environments/${prod.id}/emails?to=carol@example.test`,
      credential: t.platformKey,
    });
    expect(view.json().data[0]).toMatchObject({
      status: 'sent',
      attempts: 1,
      lastError: null,
      sentAt: expect.any(Number),
      text: '',
      html: '',
    });
    // The body held a one-time link; once delivered it is gone from the database too.
    const row = await t.store.db
      .selectFrom('email_outbox')
      .selectAll()
      .where('environment_id', '=', prod.id)
      .where('to_address', '=', 'carol@example.test')
      .executeTakeFirstOrThrow();
    expect([row.text_body, row.html_body]).toEqual(['', '']);
  });

  it('refuses to enqueue anything but one canonical address', async () => {
    for (const to of ['a@x.test,b@y.test', '"a@evil.test"@victim.test', 'Eve <eve@evil.test>', 'a@x.test\r\nBcc: b@y.test', 'a@X.TEST']) {
      await expect(enqueue(prod, to)).rejects.toThrow('one canonical address');
    }
  });

  it('sends at most 5 emails per address per 10 minutes, then writes but suppresses', async () => {
    const start = Date.now();
    const statuses = [];
    for (let i = 0; i < THROTTLE.perAddress + 2; i++) statuses.push(await enqueue(dev, 'dora@example.test', start + i));
    expect(statuses).toEqual(['captured', 'captured', 'captured', 'captured', 'captured', 'suppressed', 'suppressed']);
    expect(await enqueue(dev, 'dora@example.test', start + THROTTLE.windowMs + 10)).toBe('captured');
  });

  it('writes a suppressed row when the flow must send nothing, so both paths do the same work', async () => {
    expect(await enqueue(prod, 'nobody@example.test', Date.now(), false)).toBe('suppressed');
    const row = await t.store.db
      .selectFrom('email_outbox')
      .selectAll()
      .where('environment_id', '=', prod.id)
      .where('to_address', '=', 'nobody@example.test')
      .executeTakeFirstOrThrow();
    expect([row.text_body, row.html_body]).toEqual(['', '']);
    await t.app.outbox.drain();
    expect(smtp.received.filter((m) => m.rcptTo.includes('nobody@example.test'))).toHaveLength(0);
  });
});

describe('outbox retention', () => {
  it('keeps at most the last 1,000 captured emails per environment, for 7 days', async () => {
    const t = await startTestApp();
    const dev = await t.tenancy.getEnvironment(t.project.development.id);
    const now = Date.now();
    const rendered = message('https://example.test/cb');
    await t.store.db.transaction().execute(async (tx) => {
      const rows = Array.from({ length: 1005 }, (_, i) => ({
        environment_id: dev.id,
        id: `msg_${String(i).padStart(6, '0')}`,
        kind: 'magic_link',
        to_address: `u${i}@example.test`,
        to_key: `u${i}@example.test`,
        subject: rendered.subject,
        text_body: rendered.text,
        html_body: rendered.html,
        status: 'captured' as const,
        next_attempt_at: now,
        locked_until: null,
        last_error: null,
        created_at: i === 0 ? now - 8 * 86_400_000 : now,
        sent_at: now,
      }));
      for (let i = 0; i < rows.length; i += 200)
        await tx
          .insertInto('email_outbox')
          .values(rows.slice(i, i + 200))
          .execute();
    });
    await enqueueIn(t, { environment: dev, kind: 'magic_link', to: 'last@example.test', rendered, deliver: true }, now);
    const left = await t.store.db.selectFrom('email_outbox').select(['id', 'to_address']).where('environment_id', '=', dev.id).execute();
    expect(left).toHaveLength(1000);
    expect(left.map((r) => r.to_address)).toContain('last@example.test');
    expect(left.map((r) => r.id)).not.toContain('msg_000000');
    await t.close();
  });
});

describe('outbox delivery failures and concurrency', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let prod: Environment;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ mail: { transport: new UnconfiguredTransport() } });
    prod = await t.tenancy.getEnvironment(t.project.production.id);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const enqueueMany = async (prefix: string, count: number, now = Date.now()) => {
    for (let i = 0; i < count; i++) {
      await enqueueIn(
        t,
        {
          environment: prod,
          kind: 'magic_link',
          to: `${prefix}${i}@example.test`,
          rendered: message('https://example.test/cb'),
          deliver: true,
        },
        now,
      );
    }
  };

  it('without SMTP, keeps the message and shows the failure instead of dropping it, then gives up visibly', async () => {
    await enqueueMany('nosmtp', 1);
    let clock = Date.now();
    const worker = new OutboxWorker(t.store, new UnconfiguredTransport(), { clock: () => clock, maxAttempts: 3 });
    await worker.runOnce();
    const url = `/v1/platform/environments/${prod.id}/emails?to=nosmtp0@example.test`;
    const first = (await t.call({ method: 'GET', url, credential: t.platformKey })).json().data[0];
    expect(first).toMatchObject({ status: 'pending', attempts: 1, lastError: expect.stringContaining('SMTP_URL is not configured') });

    for (let i = 0; i < 3; i++) {
      clock += 60 * 60_000;
      await worker.runOnce();
    }
    const last = (await t.call({ method: 'GET', url, credential: t.platformKey })).json().data[0];
    expect(last).toMatchObject({ status: 'failed', attempts: 3 });
  });

  it('redelivers a message whose worker died after claiming it, once the claim expires, exactly once', async () => {
    await enqueueMany('crash', 1);
    const now = Date.now();
    // Worker A claims and dies before sending: nothing marks the row.
    const claimed = await claimDue(t.store.db, { now, lockMs: 60_000, batchSize: 50, dialect: t.store.dialect });
    expect(claimed.map((m) => m.to_address)).toContain('crash0@example.test');

    const transport = new SmtpTransport(smtp.url, 'auth@gatehouse.test');
    const early = new OutboxWorker(t.store, transport, { clock: () => now + 1_000 });
    await early.drain();
    expect(smtp.received.filter((m) => m.rcptTo.includes('crash0@example.test'))).toHaveLength(0);

    const later = new OutboxWorker(t.store, transport, { clock: () => now + 61_000 });
    await later.drain();
    await later.drain();
    expect(smtp.received.filter((m) => m.rcptTo.includes('crash0@example.test'))).toHaveLength(1);
    transport.close();
  });

  it('never sends one message twice when two workers run at once', async () => {
    await enqueueMany('race', 40);
    const now = Date.now() + 10 * 60 * 60_000;
    const transportA = new SmtpTransport(smtp.url, 'auth@gatehouse.test');
    const transportB = new SmtpTransport(smtp.url, 'auth@gatehouse.test');
    const a = new OutboxWorker(t.store, transportA, { clock: () => now, batchSize: 5 });
    const b = new OutboxWorker(t.store, transportB, { clock: () => now, batchSize: 5 });
    await Promise.all([a.drain(), b.drain()]);
    const raced = smtp.received.filter((m) => m.rcptTo[0]!.startsWith('race'));
    expect(raced).toHaveLength(40);
    expect(new Set(raced.map((m) => m.rcptTo[0])).size).toBe(40);
    transportA.close();
    transportB.close();
  });
});
