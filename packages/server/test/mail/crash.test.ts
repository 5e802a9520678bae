import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { dropPostgresSchema, testDb } from '../helpers/store.js';

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`a crash between the API answer and the send (${testDb()})`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-crash-'));
  const schema = `gh_crash_${randomBytes(5).toString('hex')}`;
  const platformKey = `plk_${randomBytes(32).toString('base64url')}`;
  let smtp: TestSmtpServer | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    if (server) await stopServerProcess(server, 'SIGKILL');
    await smtp?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  });

  it('still delivers the email, exactly once, after a restart', async () => {
    // Listening from the start (a port reserved and bound later could be taken meanwhile); node A
    // runs no email worker, and the test checks that nothing arrived before the restart.
    smtp = await startSmtpServer();
    const port = await freePort();
    const env = {
      PORT: String(port),
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_PLATFORM_KEY: platformKey,
      GATEHOUSE_SECRET: randomBytes(48).toString('base64url'),
      SMTP_URL: smtp.url,
      SMTP_FROM: 'auth@gatehouse.test',
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

    // Node A serves the API only, so the crash lands after the answer and before any send attempt.
    // (A worker that dies mid-send is covered by the claim-expiry test in outbox.test.ts.)
    server = await startServerProcess({ ...env, GATEHOUSE_EMAIL_WORKER: 'off' });
    expect(server.exitCode).toBeNull();
    const projects = await call('GET', '/v1/platform/projects', platformKey);
    const production = projects.body.data[0].environments.find((e: { type: string }) => e.type === 'production');
    await call('PATCH', `/v1/platform/environments/${production.id}`, platformKey, { domain: 'example.test' });
    const { secretKey } = (await call('POST', `/v1/platform/environments/${production.id}/secret-keys`, platformKey)).body;
    const address = `crash.${Date.now()}@example.test`;
    expect((await call('POST', '/v1/users', secretKey, { email: address })).status).toBe(201);

    const started = await call('POST', '/v1/auth/magic-link', production.publishableKey, {
      email: address,
      redirectUrl: 'https://app.example.test/callback',
    });
    expect(started.status).toBe(202);
    await stopServerProcess(server, 'SIGKILL');
    expect(smtp.received).toEqual([]);

    server = await startServerProcess(env);
    expect(server.exitCode).toBeNull();
    const received = () => smtp!.received.filter((m) => m.rcptTo.includes(address));
    await waitFor(() => received().length > 0, 30_000);
    // Give the worker a few more polls to show it does not send the message again.
    await new Promise((r) => setTimeout(r, 3_000));

    expect(received()).toHaveLength(1);
    const mail = received()[0]!;
    expect(mail.rcptTo).toEqual([address]);
    expect(mail.mailFrom).toBe('auth@gatehouse.test');
    expect(mail.subject).toBe('Sign in to Default project');
    const link = /https:\/\/app\.example\.test\/callback\?token=[A-Za-z0-9_-]+/.exec(mail.decoded)?.[0];
    expect(link).toBeDefined();

    const verified = await call('POST', '/v1/auth/magic-link/verify', production.publishableKey, {
      token: new URL(link!).searchParams.get('token'),
    });
    expect(verified.status).toBe(200);
    expect(verified.body.user.email).toBe(address);
  }, 90_000);
});
