import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { dropPostgresSchema, testDb } from '../helpers/store.js';

interface OtlpSpan {
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP receiver (http/json): collects the spans posted to /v1/traces. */
async function startReceiver() {
  const spans: (OtlpSpan & { service: string })[] = [];
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        bodies.push(body);
        const parsed = JSON.parse(body) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: OtlpSpan[] }[];
          }[];
        };
        for (const resourceSpan of parsed.resourceSpans) {
          const service = resourceSpan.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resourceSpan.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, bodies, close: () => server.close() };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

describe(`traces over OTLP/HTTP (${testDb()})`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-traces-'));
  const schema = `gh_traces_${randomBytes(5).toString('hex')}`;
  let server: ServerProcess | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  let hooks: http.Server | undefined;
  afterAll(async () => {
    if (server) await stopServerProcess(server, 'SIGKILL');
    receiver?.close();
    hooks?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  });

  it('exports spans for requests, SQL, Redis and outgoing HTTP, with no credential in them', async () => {
    receiver = await startReceiver();
    let delivered = 0;
    hooks = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        delivered++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hooks!.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
    const platformKey = `plk_${randomBytes(32).toString('base64url')}`;
    const port = await freePort();
    const postgres = testDb() === 'postgres';
    server = await startServerProcess({
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_PLATFORM_KEY: platformKey,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'gatehouse-test',
      ...(postgres ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {}),
      ...(postgres && process.env.REDIS_URL
        ? { REDIS_URL: process.env.REDIS_URL, GATEHOUSE_REDIS_PREFIX: `ghtraces${randomBytes(4).toString('hex')}:` }
        : {}),
    });
    expect(server.exitCode, server.output).toBeNull();
    expect(server.output).toContain('Traces:');
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, url: string, credential: string, body?: object) => {
      const res = await fetch(base + url, {
        method,
        headers: { authorization: `Bearer ${credential}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const development = (await call('GET', '/v1/platform/projects', platformKey)).body.data[0].environments.find(
      (e: { type: string }) => e.type === 'development',
    );
    expect(
      (await call('POST', `/v1/platform/environments/${development.id}/webhook-endpoints`, platformKey, { url: hookUrl })).status,
    ).toBe(201);
    const { secretKey } = (await call('POST', `/v1/platform/environments/${development.id}/secret-keys`, platformKey)).body;
    expect((await call('POST', '/v1/users', secretKey, { email: `traced.${Date.now()}@example.test` })).status).toBe(201);
    expect((await call('GET', '/v1/users?limit=1&email=someone%40example.test', secretKey)).status).toBe(200);
    const deadline = Date.now() + 15_000;
    while (delivered === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(delivered).toBeGreaterThan(0);
    // SIGTERM flushes the spans still buffered.
    await stopServerProcess(server, 'SIGTERM');
    expect(server.child.exitCode).toBe(0);

    const spans = receiver.spans;
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['gatehouse-test']));
    // Requests, by route (@fastify/otel), under the HTTP server span.
    expect(spans.some((s) => attribute(s, 'http.route') === '/v1/users/' || attribute(s, 'http.route') === '/v1/users')).toBe(true);
    expect(spans.some((s) => s.kind === 2 /* SERVER */)).toBe(true);
    // Outgoing HTTP: the webhook delivery, a client span to the receiver.
    expect(spans.some((s) => s.kind === 3 /* CLIENT */ && JSON.stringify(s.attributes).includes(hookUrl.replace('/hook', '')))).toBe(true);
    if (postgres) {
      expect(spans.some((s) => attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql')).toBe(true);
      if (process.env.REDIS_URL)
        expect(spans.some((s) => attribute(s, 'db.system') === 'redis' || attribute(s, 'db.system.name') === 'redis')).toBe(true);
    }
    // No credential in any span: the query's values are redacted as in the log.
    const exported = receiver.bodies.join('\n');
    for (const secret of [secretKey, platformKey]) expect(exported.includes(secret)).toBe(false);
    const leaking = spans.flatMap((s) =>
      (s.attributes ?? []).filter((a) => JSON.stringify(a.value).includes('someone')).map((a) => `${s.name}: ${a.key}`),
    );
    expect(leaking).toEqual([]);
    expect(exported).not.toContain('someone%40example.test');
  }, 60_000);

  it('loads no OpenTelemetry package, nor prom-client, when neither is configured', async () => {
    const out = path.join(dataDir, 'loaded.json');
    const probe = path.join(dataDir, 'probe.cjs');
    writeFileSync(
      probe,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))));`,
    );
    const plain = await startServerProcess({
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      GATEHOUSE_DATA_DIR: path.join(dataDir, 'plain'),
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${probe}`.trim(),
    });
    expect(plain.exitCode, plain.output).toBeNull();
    await stopServerProcess(plain, 'SIGTERM');
    const loaded = JSON.parse(readFileSync(out, 'utf8')) as string[];
    // The probe works: the server's own modules are listed.
    expect(loaded.some((file) => file.includes('better-sqlite3'))).toBe(true);
    expect(loaded.filter((file) => /@opentelemetry|@fastify[\\/]otel|prom-client/.test(file))).toEqual([]);
  });
});
