import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/index.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { dropPostgresSchema, testDb } from '../helpers/store.js';

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`kill -9 of the server in the middle of a webhook delivery (${testDb()})`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-webhook-crash-'));
  const schema = `gh_whcrash_${randomBytes(5).toString('hex')}`;
  const platformKey = `plk_${randomBytes(32).toString('base64url')}`;
  let server: ServerProcess | undefined;
  let receiver: http.Server | undefined;

  afterAll(async () => {
    if (server) await stopServerProcess(server, 'SIGKILL');
    receiver?.closeAllConnections();
    receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  });

  it('loses nothing: the attempt is sent again, with the same webhook-id, after a restart', async () => {
    // The receiver holds the first delivery open (the server dies while waiting for the answer) and accepts later ones.
    const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (received.length > 1) res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const port = await freePort();
    const env = {
      PORT: String(port),
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_PLATFORM_KEY: platformKey,
      GATEHOUSE_SECRET: randomBytes(48).toString('base64url'),
      ...(testDb() === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {}),
    };
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, url: string, credential: string, body?: object) => {
      const res = await fetch(base + url, {
        method,
        headers: { authorization: `Bearer ${credential}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    server = await startServerProcess(env);
    expect(server.exitCode).toBeNull();
    const projects = await call('GET', '/v1/platform/projects', platformKey);
    const development = projects.body.data[0].environments.find((e: { type: string }) => e.type === 'development');
    const endpoint = await call('POST', `/v1/platform/environments/${development.id}/webhook-endpoints`, platformKey, { url: receiverUrl });
    expect(endpoint.status).toBe(201);
    const { secretKey } = (await call('POST', `/v1/platform/environments/${development.id}/secret-keys`, platformKey)).body;
    expect((await call('POST', '/v1/users', secretKey, { email: `crash.${Date.now()}@example.test` })).status).toBe(201);

    // The running worker sends it on its own; kill the server while the receiver holds the request.
    await waitFor(() => received.length === 1, 20_000);
    await stopServerProcess(server, 'SIGKILL');

    // The attempt survived the crash, still pending under the dead node's lease.
    const store = openStore(
      testDb() === 'postgres'
        ? { databaseUrl: process.env.DATABASE_URL!, postgresSchema: schema }
        : { sqliteFile: path.join(dataDir, 'gatehouse.db') },
    );
    try {
      const rows = await store.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'status', 'attempt', 'locked_until'])
        .where('environment_id', '=', development.id)
        .execute();
      expect(rows).toEqual([expect.objectContaining({ status: 'pending', attempt: 1, locked_until: expect.any(Number) })]);
      // Let the lease run out (60 s) without waiting for it: move it into the past.
      await store.db
        .updateTable('webhook_deliveries')
        .set({ locked_until: 1 })
        .where('environment_id', '=', development.id)
        .where('id', '=', rows[0]!.id)
        .execute();
    } finally {
      await store.close();
    }

    server = await startServerProcess(env);
    expect(server.exitCode).toBeNull();
    await waitFor(() => received.length >= 2, 20_000);
    // A few more polls, to show it is not sent a third time.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(received).toHaveLength(2);
    expect(received[1]!.headers['webhook-id']).toBe(received[0]!.headers['webhook-id']);
    const event = new Webhook(endpoint.body.secret).verify(received[1]!.body, received[1]!.headers as Record<string, string>) as {
      type: string;
    };
    expect(event.type).toBe('user.created');
    const log = await call(
      'GET',
      `/v1/platform/environments/${development.id}/webhook-endpoints/${endpoint.body.id}/deliveries`,
      platformKey,
    );
    expect(log.body.data).toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', responseStatus: 204 })]);
  }, 90_000);
});
