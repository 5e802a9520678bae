import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { listenForScrapes } from '../../src/metrics/plugin.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { start } from '../helpers/flows.js';
import { GOOD_PASSWORD, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { enableTotp, signInWithTotp } from '../helpers/mfa.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { dropPostgresSchema, openTestStore, testDb } from '../helpers/store.js';
import { createEndpoint, startReceiver, type Receiver } from '../webhooks/receiver.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (0.0.4), parsed strictly enough that a malformed line fails the test. */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    // Values are read as Go's ParseFloat reads them, ignoring case: prom-client writes the event-loop
    // lag it has not sampled yet (a scrape right after start) as `Nan`.
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|nan|[+-]inf)$/i.exec(line);
    if (!sample) throw new Error(`not a line of the Prometheus text format: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { types, samples };
}

const FAMILIES = {
  gatehouse_http_requests_total: 'counter',
  gatehouse_http_request_duration_seconds: 'histogram',
  gatehouse_sign_ins_total: 'counter',
  gatehouse_outbox_depth: 'gauge',
  gatehouse_outbox_oldest_age_seconds: 'gauge',
  gatehouse_webhook_deliveries_total: 'counter',
  gatehouse_rate_limit_refusals_total: 'counter',
  ...(testDb() === 'postgres' ? { gatehouse_db_pool_connections: 'gauge' } : {}),
};

describe(`metrics (${testDb()})`, () => {
  let t: TestApp;
  let scrapes: Server;
  let receiver: Receiver;
  let scrapeUrl: string;
  beforeAll(async () => {
    const store = await openTestStore();
    const metrics = new Metrics(store);
    t = await startTestApp({ store, metrics });
    scrapes = await listenForScrapes(metrics, 0, '127.0.0.1');
    scrapeUrl = `http://127.0.0.1:${(scrapes.address() as { port: number }).port}/metrics`;
    receiver = await startReceiver();
  });
  afterAll(async () => {
    scrapes.close();
    await receiver.close();
    await t.close();
  });

  async function scrape() {
    const res = await fetch(scrapeUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  }
  const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

  it('exposes exactly the families DESIGN fixes, with route templates and no ids, after real traffic', async () => {
    const env = t.project.development;
    const user = await signUp(t);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(200);
    expect((await signIn(t, user.email, 'not the password at all')).statusCode).toBe(401);
    // A sign-in that asks for a second factor (202), then its second step.
    const { secret } = await enableTotp(t, user.accessToken);
    await signInWithTotp(t, user.email, secret, { offset: 1 });
    expect((await t.call({ method: 'GET', url: `/v1/users/${user.userId}`, credential: env.secretKey })).statusCode).toBe(200);
    // A 429: an environment whose limit is 2 a minute.
    const limited = (await t.createProject('Limited')).development;
    await t.setSettings(limited.id, { rateLimitPerMinute: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await t.call({ method: 'GET', url: '/v1/environment', credential: limited.publishableKey })).statusCode);
    expect(statuses).toContain(429);
    // Production mail waits in the outbox (the worker is driven by hand here).
    const production = t.project.production;
    const address = uniqueEmail('metered');
    await t.call({ method: 'POST', url: '/v1/users', credential: production.secretKey, payload: { email: address } });
    expect((await start(t, 'email-code', { email: address }, production)).statusCode).toBe(202);
    // A webhook delivered.
    await createEndpoint(t, env.id, { url: receiver.url });
    await signUp(t);
    await t.app.webhooks.drain();
    expect(receiver.received.length).toBeGreaterThan(0);

    const { types, samples } = await scrape();
    const ours = [...types].filter(([name]) => name.startsWith('gatehouse_'));
    expect(Object.fromEntries(ours)).toEqual(FAMILIES);
    // prom-client's defaults: process and event-loop metrics.
    expect(types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');

    expect(value(samples, 'gatehouse_http_requests_total', { method: 'GET', route: '/v1/users/:userId', status: '200' })).toBe(1);
    expect(value(samples, 'gatehouse_http_request_duration_seconds_count', { method: 'POST', route: '/v1/auth/signin' })).toBe(3);
    expect(value(samples, 'gatehouse_sign_ins_total', { method: 'password', outcome: 'success' })).toBe(1);
    expect(value(samples, 'gatehouse_sign_ins_total', { method: 'password', outcome: 'failure' })).toBe(1);
    expect(value(samples, 'gatehouse_sign_ins_total', { method: 'password', outcome: 'second_factor' })).toBe(1);
    expect(value(samples, 'gatehouse_sign_ins_total', { method: 'second_factor', outcome: 'success' })).toBe(1);
    expect(value(samples, 'gatehouse_rate_limit_refusals_total')).toBe(statuses.filter((s) => s === 429).length);
    expect(value(samples, 'gatehouse_outbox_depth', { kind: 'email' })).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'gatehouse_outbox_oldest_age_seconds', { kind: 'email' })).toBeGreaterThanOrEqual(0);
    expect(samples.some((s) => s.name === 'gatehouse_outbox_depth' && s.labels.kind === 'webhook')).toBe(true);
    expect(value(samples, 'gatehouse_webhook_deliveries_total', { outcome: 'success' })).toBeGreaterThan(0);
    if (testDb() === 'postgres') {
      expect(
        value(samples, 'gatehouse_db_pool_connections', { state: 'idle' }) +
          value(samples, 'gatehouse_db_pool_connections', { state: 'active' }),
      ).toBeGreaterThan(0);
    }

    // Route templates only: no id, key or token ever becomes a label value.
    const routes = new Set(samples.filter((s) => s.labels.route !== undefined).map((s) => s.labels.route!));
    for (const route of routes) expect(route === 'unmatched' || route.startsWith('/'), route).toBe(true);
    const labelValues = samples.flatMap((s) => Object.values(s.labels)).join('\n');
    expect(labelValues).not.toMatch(/user_|env_|org_|pk_test|sk_test|plk_|rt_/);
  });

  it('is not served on the public port', async () => {
    expect((await t.call({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    expect((await fetch(scrapeUrl.replace('/metrics', '/v1/health'))).status).toBe(404);
  });
});

describe(`METRICS_PORT on the built server (${testDb()})`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-metrics-'));
  const schema = `gh_metrics_${randomBytes(5).toString('hex')}`;
  let server: ServerProcess | undefined;
  afterAll(async () => {
    if (server) await stopServerProcess(server);
    rmSync(dataDir, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  });

  it('serves /metrics on its own port and not on PORT', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    server = await startServerProcess({
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      GATEHOUSE_DATA_DIR: dataDir,
      ...(testDb() === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {}),
    });
    expect(server.exitCode, server.output).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    const { samples } = parseExposition(await scraped.text());
    expect(value(samples, 'gatehouse_http_requests_total', { route: '/v1/health', status: '200' })).toBe(1);
  });
  const value = (samples: Sample[], name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
});
