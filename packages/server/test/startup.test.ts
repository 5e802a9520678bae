import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startServerProcess, stopServerProcess } from './helpers/process.js';
import { dropPostgresSchema, testDb } from './helpers/store.js';

describe(`npm start (${testDb()})`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  const schema = `gh_start_${randomBytes(5).toString('hex')}`;
  const databaseEnv: Record<string, string> =
    testDb() === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {};

  let firstSetupLink: string | undefined;

  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  });

  it('on first start creates the Default project, prints the keys, and serves them', async () => {
    const port = await freePort();
    const started = await startServerProcess({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, ...databaseEnv });
    try {
      expect(started.exitCode).toBeNull();
      // With the code cache the build made (src/boot/loader.ts): without it, a note says so.
      expect(started.output).not.toContain('.v8cache');
      expect(started.output).toContain(`Base URL:      http://localhost:${port}`);
      expect(started.output).toContain(`Console:       http://localhost:${port}/console\n`);
      firstSetupLink = /(http:\/\/localhost:\d+\/console\/setup\?token=gh_setup_\S+)/.exec(started.output)?.[1];
      expect(firstSetupLink).toBeDefined();
      const platformKey = /Platform key:\s+(plk_\S+)/.exec(started.output)?.[1];
      const publishableKey = /Publishable key:\s+(pk_test_\S+)/.exec(started.output)?.[1];
      const secretKey = /Secret key:\s+(sk_test_\S+)/.exec(started.output)?.[1];
      expect(platformKey).toBeDefined();
      expect(publishableKey).toBeDefined();
      expect(secretKey).toBeDefined();

      // Each environment: its id, keys, issuer and JWKS URL. Production has no secret key until one is asked for.
      const base = `http://localhost:${port}`;
      const environments = [...started.output.matchAll(/(Development|Production) environment (env_\S+)/g)].map((m) => m[2]!);
      expect(environments).toHaveLength(2);
      for (const id of environments) {
        expect(started.output).toContain(`Issuer:          ${base}/v1/environments/${id}\n`);
        expect(started.output).toContain(`JWKS URL:        ${base}/v1/environments/${id}/.well-known/jwks.json\n`);
        const jwks = await fetch(`http://127.0.0.1:${port}/v1/environments/${id}/.well-known/jwks.json`);
        expect(jwks.status).toBe(200);
      }
      expect(started.output).toMatch(/Publishable key:\s+pk_live_\S+/);
      expect(started.output).not.toContain('sk_live_');
      const production = environments[1]!;
      expect(started.output).toContain(`${base}/v1/platform/environments/${production}/secret-keys`);
      const keysOf = async (id: string) =>
        (
          (await (
            await fetch(`http://127.0.0.1:${port}/v1/platform/environments/${id}/secret-keys`, {
              headers: { authorization: `Bearer ${platformKey}` },
            })
          ).json()) as { data: unknown[] }
        ).data;
      expect(await keysOf(production)).toEqual([]);
      // The bundle leaves YAML out (scripts/build.mjs): the OpenAPI document is JSON, and still served.
      const openapi = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`);
      expect(openapi.status).toBe(200);
      expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\./);
      expect(await keysOf(environments[0]!)).toHaveLength(1);
      const created = await fetch(`http://127.0.0.1:${port}/v1/platform/environments/${production}/secret-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${platformKey}` },
      });
      expect(((await created.json()) as { secretKey: string }).secretKey).toMatch(/^sk_live_/);

      // PostgreSQL with the filesystem object store: a second node would not find this node's objects.
      const objectsWarning = "Warning: PostgreSQL is configured but objects (uploaded images) are stored on this node's disk.";
      if (testDb() === 'postgres') expect(started.output).toContain(objectsWarning);
      else expect(started.output).not.toContain(objectsWarning);

      const res = await fetch(`http://127.0.0.1:${port}/v1/environment`, { headers: { authorization: `Bearer ${publishableKey}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ type: 'development', rateLimit: { requestsPerMinute: 1000 } });

      const projects = await fetch(`http://127.0.0.1:${port}/v1/platform/projects`, {
        headers: { authorization: `Bearer ${platformKey}` },
      });
      const listed = (await projects.json()) as { data: Array<{ name: string }> };
      expect(listed.data.map((p) => p.name)).toEqual(['Default project']);

      expect(statSync(path.join(dataDir, 'platform-key')).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(dataDir, 'instance-secret')).mode & 0o777).toBe(0o600);
      if (testDb() === 'sqlite') expect(existsSync(path.join(dataDir, 'gatehouse.db'))).toBe(true);
    } finally {
      await stopServerProcess(started);
    }
  });

  it('on a later start keeps the data and prints no keys again, but a new setup link while no operator exists', async () => {
    const port = await freePort();
    const started = await startServerProcess({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, ...databaseEnv });
    try {
      expect(started.exitCode).toBeNull();
      expect(started.output).not.toContain('Secret key:');
      expect(started.output).not.toContain('Platform key:');
      const link = /(http:\/\/localhost:\d+\/console\/setup\?token=gh_setup_\S+)/.exec(started.output)?.[1];
      expect(link).toBeDefined();
      expect(new URL(link!).searchParams.get('token')).not.toBe(new URL(firstSetupLink!).searchParams.get('token'));
      const created = await fetch(`http://127.0.0.1:${port}/v1/console/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: new URL(link!).searchParams.get('token'), email: 'ops@example.com', password: 'correct horse battery staple' }),
      });
      expect(created.status).toBe(201);
    } finally {
      await stopServerProcess(started);
    }
  });

  it('with an S3 object store, warns neither about objects on one disk nor about the AWS SDK and Node 20', async () => {
    const started = await startServerProcess({
      PORT: String(await freePort()),
      GATEHOUSE_DATA_DIR: dataDir,
      S3_ENDPOINT: 'http://127.0.0.1:9',
      S3_BUCKET: 'gatehouse-start',
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'start',
      S3_SECRET_ACCESS_KEY: 'start-secret',
      S3_PUBLIC_BASE_URL: 'http://127.0.0.1:9/gatehouse-start',
      ...databaseEnv,
    });
    try {
      expect(started.exitCode, started.output).toBeNull();
      expect(started.output).toContain('Object store:  S3 bucket gatehouse-start');
      expect(started.output).not.toContain('Warning: PostgreSQL is configured');
      expect(started.output).not.toMatch(/NodeVersionSupportWarning|node >=22/);
    } finally {
      await stopServerProcess(started);
    }
  });

  it('refuses a different GATEHOUSE_SECRET than the store was initialized with', async () => {
    const started = await startServerProcess({
      PORT: String(await freePort()),
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_SECRET: 'x'.repeat(48),
      ...databaseEnv,
    });
    await stopServerProcess(started);
    expect(started.exitCode).toBe(1);
    expect(started.output).toContain('GATEHOUSE_SECRET');
  });

  it('stops on a bad value with one line that names the variable', async () => {
    const started = await startServerProcess({ PORT: 'eighty', GATEHOUSE_DATA_DIR: dataDir });
    expect(started.exitCode).toBe(1);
    expect(started.output.trim().split('\n')).toEqual([
      'Configuration error: PORT: "eighty" is not a port number; use an integer from 0 to 65535.',
    ]);
  });
});
