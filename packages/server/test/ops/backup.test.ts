import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { serverDir } from '../helpers/built-server.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { testDb } from '../helpers/store.js';

const run = promisify(execFile);
const backupScript = path.join(serverDir, 'dist/backup.js');

function backup(file: string, env: Record<string, string>) {
  return run(process.execPath, [backupScript, file], { env: { PATH: process.env.PATH ?? '', ...env } });
}

describe.runIf(testDb() === 'sqlite')('npm run backup on the embedded database, while it serves writes', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-backup-'));
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await stopServerProcess(server, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('makes a consistent copy under writes, and a server restored from it starts and has every write acknowledged before the backup', async () => {
    const dataDir = path.join(root, 'live');
    const env = {
      GATEHOUSE_PLATFORM_KEY: `plk_${randomBytes(32).toString('base64url')}`,
      GATEHOUSE_SECRET: randomBytes(48).toString('base64url'),
    };
    const port = await freePort();
    const server = await startServerProcess({ ...env, PORT: String(port), HOST: '127.0.0.1', GATEHOUSE_DATA_DIR: dataDir });
    servers.push(server);
    expect(server.exitCode, server.output).toBeNull();
    const base = `http://127.0.0.1:${port}`;
    const call = async (url: string, credential: string, method = 'GET', body?: object) => {
      const res = await fetch(base + url, {
        method,
        headers: { authorization: `Bearer ${credential}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const development = (await call('/v1/platform/projects', env.GATEHOUSE_PLATFORM_KEY)).body.data[0].environments.find(
      (e: { type: string }) => e.type === 'development',
    );
    expect(
      (await call(`/v1/platform/environments/${development.id}`, env.GATEHOUSE_PLATFORM_KEY, 'PATCH', { rateLimitPerMinute: 100_000 }))
        .status,
    ).toBe(200);
    const { secretKey } = (
      await call(`/v1/platform/environments/${development.id}/secret-keys`, env.GATEHOUSE_PLATFORM_KEY, 'POST')
    ).body;

    const acknowledged: string[] = [];
    let writing = true;
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const res = await call('/v1/users', secretKey, 'POST', { email: `backup.${n}.${i}@example.test` });
        if (res.status !== 201) {
          writing = false;
          throw new Error(`a write was refused: ${res.status} ${JSON.stringify(res.body)}`);
        }
        acknowledged.push(res.body.id);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    while (writing && acknowledged.length < 50) await new Promise((r) => setTimeout(r, 20));

    const before = [...acknowledged];
    const file = path.join(root, 'copy.db');
    const made = await backup(file, { GATEHOUSE_DATA_DIR: dataDir });
    const after = acknowledged.length;
    expect(made.stdout).toContain('Backed up');
    // Writes went on during the copy: it was made online.
    while (writing && acknowledged.length < after + 20) await new Promise((r) => setTimeout(r, 20));
    writing = false;
    await Promise.all(writers);
    expect(existsSync(`${file}.partial`)).toBe(false);
    await expect(backup(file, { GATEHOUSE_DATA_DIR: dataDir })).rejects.toMatchObject({
      stderr: expect.stringContaining('already exists'),
    });

    // Restore: the file as gatehouse.db in a fresh data directory, with the same secret.
    const restoredDir = path.join(root, 'restored');
    mkdirSync(restoredDir);
    copyFileSync(file, path.join(restoredDir, 'gatehouse.db'));
    const restoredPort = await freePort();
    const restored = await startServerProcess({ ...env, PORT: String(restoredPort), HOST: '127.0.0.1', GATEHOUSE_DATA_DIR: restoredDir });
    servers.push(restored);
    expect(restored.exitCode, restored.output).toBeNull();
    // The secret key created before the backup still works (its hash is in the copy), and every
    // write acknowledged before the backup began is there.
    const restoredCall = (url: string) =>
      fetch(`http://127.0.0.1:${restoredPort}${url}`, { headers: { authorization: `Bearer ${secretKey}` } });
    for (const id of before) expect((await restoredCall(`/v1/users/${id}`)).status, id).toBe(200);
    expect((await fetch(`http://127.0.0.1:${restoredPort}/v1/ready`)).status).toBe(200);
  }, 60_000);
});

describe.runIf(testDb() === 'postgres')('npm run backup on PostgreSQL', () => {
  it('refuses, and points at pg_dump', async () => {
    await expect(
      backup(path.join(os.tmpdir(), `never-${randomBytes(4).toString('hex')}.db`), { DATABASE_URL: process.env.DATABASE_URL! }),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining('pg_dump'),
    });
  });
});
