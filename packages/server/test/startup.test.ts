import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { testDb } from './helpers/store.js';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

interface Started {
  child: ChildProcess;
  output: string;
  exitCode: number | null;
}

/** Starts `main.ts` as a real process and resolves once it prints its banner (or exits). */
function start(env: Record<string, string>): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: serverDir,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Gatehouse is running.') && output.trimEnd().length > 0 && /\n\n$/.test(output)) {
        clearTimeout(timer);
        resolve({ child, output, exitCode: null });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ child, output, exitCode: code });
    });
  });
}

async function stop(started: Started): Promise<void> {
  if (started.exitCode !== null || started.child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    started.child.once('exit', () => resolve());
    started.child.kill('SIGTERM');
  });
}

describe(`npm start (${testDb()})`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  const schema = `gh_start_${randomBytes(5).toString('hex')}`;
  const databaseEnv: Record<string, string> =
    testDb() === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {};

  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (testDb() === 'postgres') {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  });

  it('on first start creates the Default project, prints the keys, and serves them', async () => {
    const port = await freePort();
    const started = await start({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, ...databaseEnv });
    try {
      expect(started.exitCode).toBeNull();
      expect(started.output).toContain(`Base URL:      http://localhost:${port}`);
      const platformKey = /Platform key:\s+(plk_\S+)/.exec(started.output)?.[1];
      const publishableKey = /Publishable key:\s+(pk_test_\S+)/.exec(started.output)?.[1];
      const secretKey = /Secret key:\s+(sk_test_\S+)/.exec(started.output)?.[1];
      expect(platformKey).toBeDefined();
      expect(publishableKey).toBeDefined();
      expect(secretKey).toBeDefined();

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
      await stop(started);
    }
  });

  it('on a later start keeps the data and prints no keys again', async () => {
    const port = await freePort();
    const started = await start({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, ...databaseEnv });
    try {
      expect(started.exitCode).toBeNull();
      expect(started.output).not.toContain('Secret key:');
      expect(started.output).not.toContain('Platform key:');
    } finally {
      await stop(started);
    }
  });

  it('refuses a different GATEHOUSE_SECRET than the store was initialized with', async () => {
    const started = await start({
      PORT: String(await freePort()),
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_SECRET: 'x'.repeat(48),
      ...databaseEnv,
    });
    await stop(started);
    expect(started.exitCode).toBe(1);
    expect(started.output).toContain('GATEHOUSE_SECRET');
  });

  it('stops on a bad value with one line that names the variable', async () => {
    const started = await start({ PORT: 'eighty', GATEHOUSE_DATA_DIR: dataDir });
    expect(started.exitCode).toBe(1);
    expect(started.output.trim().split('\n')).toEqual([
      'Configuration error: PORT: "eighty" is not a port number; use an integer from 0 to 65535.',
    ]);
  });
});
