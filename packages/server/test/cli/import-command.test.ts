import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverDir } from '../helpers/built-server.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { dropPostgresSchema, testDb } from '../helpers/store.js';

const fixtures = path.join(serverDir, 'test/fixtures/import');
const command = path.join(serverDir, 'dist/import.js');

/** `npm run import -- …` as an operator runs it: the built command, against a running server. */
function runImport(args: string[], env: Record<string, string>, onLine?: (line: string, kill: () => void) => void) {
  if (statSync(command).mtimeMs < statSync(path.join(serverDir, 'src/cli/import.ts')).mtimeMs) {
    throw new Error(`${command} is older than its source: run \`npm run build -w packages/server\`.`);
  }
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [command, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (onLine) for (const line of chunk.toString().split('\n')) if (line) onLine(line, () => child.kill('SIGINT'));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe(`npm run import (${testDb()})`, { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-files-'));
  const schema = `gh_import_${randomBytes(5).toString('hex')}`;
  const platformKey = `plk_${randomBytes(24).toString('base64url')}`;
  let server: ServerProcess;
  let baseUrl: string;
  let environmentId: string;
  let secretKey: string;
  let publishableKey: string;

  const api = async (method: string, url: string, token: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json().catch(() => undefined)) as any };
  };
  const userByEmail = async (email: string) => (await api('GET', `/v1/users?email=${encodeURIComponent(email)}`, secretKey)).body.data[0];
  const signIn = (email: string, password: string) => api('POST', '/v1/auth/signin', publishableKey, { email, password });
  const env = () => ({ GATEHOUSE_URL: baseUrl, GATEHOUSE_SECRET_KEY: secretKey });
  const fixture = (name: string) => {
    const copy = path.join(work, `${randomBytes(3).toString('hex')}-${name}`);
    copyFileSync(path.join(fixtures, name), copy);
    return copy;
  };

  beforeAll(async () => {
    const port = await freePort();
    server = await startServerProcess({
      PORT: String(port),
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_PLATFORM_KEY: platformKey,
      ...(testDb() === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {}),
    });
    expect(server.exitCode, server.output).toBeNull();
    baseUrl = `http://127.0.0.1:${port}`;
    const project = await api('POST', '/v1/platform/projects', platformKey, { name: 'Import' });
    const development = project.body.environments.find((e: { type: string }) => e.type === 'development');
    environmentId = development.id;
    secretKey = development.secretKey;
    publishableKey = development.publishableKey;
  });
  afterAll(async () => {
    if (server) await stopServerProcess(server);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  });

  it('imports a Clerk export: fields mapped, passwords sign in, bad rows reported, a second run changes nothing', async () => {
    const file = fixture('clerk-users.csv');
    const first = await runImport(['--environment', environmentId, '--format', 'clerk', file], env());
    expect(first.code, first.output).toBe(1); // one row failed
    expect(first.output).toMatch(/\[#{30}\] 100% 6\/6 rows/);
    expect(first.output).toContain('Done: 4 created, 0 already there, 1 failed, 1 skipped.');
    const errors = readFileSync(`${file}.import-errors.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(errors).toEqual([
      { row: 4, skipped: expect.stringMatching(/no primary email/) },
      { row: 6, email: 'bad@clerk.example', externalId: 'user_2bad', error: expect.objectContaining({ code: 'invalid_request' }) },
    ]);

    expect(await userByEmail('ada@clerk.example')).toMatchObject({
      externalId: 'user_2ada',
      firstName: 'Ada',
      lastName: 'Lovelace',
      username: 'ada',
      emailVerified: true,
      passwordEnabled: true,
    });
    expect(await userByEmail('alan@clerk.example')).toMatchObject({ externalId: 'user_2alan', emailVerified: false });
    expect(await userByEmail('grace@clerk.example')).toMatchObject({
      firstName: 'Grace, "Amazing"',
      passwordEnabled: false,
      twoFactorEnabled: true,
    });
    expect(await userByEmail('ada@clerk.example')).toMatchObject({ twoFactorEnabled: false });
    expect((await signIn('ada@clerk.example', 'rasmuslerdorf')).status).toBe(200);
    expect((await signIn('alan@clerk.example', 'lètmein')).status).toBe(200);
    expect((await signIn('fire@clerk.example', 'user1password')).status).toBe(200);
    expect((await signIn('fire@clerk.example', 'user2password')).status).toBe(401);

    const again = await runImport(['--environment', environmentId, '--format', 'clerk', '--restart', file], env());
    expect(again.output).toContain('Done: 0 created, 4 already there, 1 failed, 1 skipped.');
  });

  it('imports a Supabase auth.users dump: confirmed emails, bcrypt passwords, metadata; deleted and phone-only users skipped', async () => {
    const file = fixture('supabase-users.csv');
    const run = await runImport(['--environment', environmentId, '--format', 'supabase', file], env());
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('Done: 3 created, 0 already there, 0 failed, 2 skipped.');
    expect(await userByEmail('sam@supabase.example')).toMatchObject({
      externalId: '7d0a5b9e-0000-4000-8000-000000000001',
      firstName: 'Sam',
      emailVerified: true,
      publicMetadata: { provider: 'email', plan: 'pro' },
      unsafeMetadata: { theme: 'dark' },
      createdAt: Date.parse('2024-03-01T10:00:00.123Z'),
    });
    expect(await userByEmail('oauth@supabase.example')).toMatchObject({ passwordEnabled: false, emailVerified: true });
    expect(await userByEmail('unconfirmed@supabase.example')).toMatchObject({ emailVerified: false, passwordEnabled: true });
    expect(await userByEmail('gone@supabase.example')).toBeUndefined();
    expect((await signIn('sam@supabase.example', 'abc')).status).toBe(200);
  });

  it('imports a plain CSV with a platform key (a secret key made for the run and revoked after)', async () => {
    const file = fixture('users.csv');
    const keysBefore = (await api('GET', `/v1/platform/environments/${environmentId}/secret-keys`, platformKey)).body.data;
    const run = await runImport(['--environment', environmentId, '--format', 'csv', file], {
      GATEHOUSE_URL: baseUrl,
      GATEHOUSE_PLATFORM_KEY: platformKey,
    });
    expect(run.output).toContain('Done: 2 created, 0 already there, 0 failed, 1 skipped.');
    expect(readFileSync(`${file}.import-errors.jsonl`, 'utf8')).toContain('column public_metadata is not JSON');
    expect(await userByEmail('lin@plain.example')).toMatchObject({
      email: 'Lin@plain.example',
      externalId: 'legacy-1',
      publicMetadata: { plan: 'team', seats: 5 },
      createdAt: 1_600_000_000_000,
      emailVerified: true,
    });
    expect((await userByEmail('kim@plain.example')).createdAt).toBe(Date.parse('2021-06-01T12:00:00Z'));
    expect((await signIn('lin@plain.example', 'password')).status).toBe(200);
    const keysAfter = (await api('GET', `/v1/platform/environments/${environmentId}/secret-keys`, platformKey)).body.data;
    expect(keysAfter.filter((k: { revokedAt: number | null }) => k.revokedAt === null)).toHaveLength(
      keysBefore.filter((k: { revokedAt: number | null }) => k.revokedAt === null).length,
    );
  });

  it('resumes after an interruption from its state file: every row imported once', async () => {
    const tag = randomBytes(3).toString('hex');
    const rows = Array.from({ length: 120 }, (_, i) => `resume${i}.${tag}@plain.example,ext-${tag}-${i}`);
    const file = path.join(work, `resume-${tag}.csv`);
    writeFileSync(file, `email,external_id\n${rows.join('\n')}\n`);
    let interruptedAt = 0;
    const first = await runImport(['--environment', environmentId, '--format', 'csv', '--batch-size', '1', file], env(), (line, kill) => {
      if (interruptedAt === 0 && / 5\/120 rows/.test(line)) {
        interruptedAt = 5;
        kill();
      }
    });
    expect(first.code, first.output).toBe(130);
    expect(first.output).toContain('run the same command again to resume');
    const state = JSON.parse(readFileSync(`${file}.import-state.json`, 'utf8'));
    expect(state.nextRow).toBeGreaterThanOrEqual(5);
    expect(state.nextRow).toBeLessThan(120);

    const second = await runImport(['--environment', environmentId, '--format', 'csv', '--batch-size', '50', file], env());
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain(`Resuming at row ${state.nextRow + 1} of 120`);
    expect(second.output).toContain('Done: 120 created, 0 already there, 0 failed, 0 skipped.');
    const listed = await api('GET', `/v1/users?query=${tag}&limit=100`, secretKey);
    const next = await api('GET', `/v1/users?query=${tag}&limit=100&cursor=${listed.body.nextCursor}`, secretKey);
    expect(listed.body.data.length + next.body.data.length).toBe(120);

    // A state file of another run is not trusted.
    const other = await runImport(['--environment', environmentId, '--format', 'clerk', file], env());
    expect(other.code).toBe(2);
    expect(other.output).toMatch(/belongs to another run|not a clerk export/);
  });

  it('refuses bad usage with a message, and a file that is not the named format', async () => {
    const missing = await runImport(['--format', 'clerk', fixture('clerk-users.csv')], env());
    expect(missing.code).toBe(2);
    expect(missing.output).toContain('--environment env_… is required');
    const wrong = await runImport(['--environment', environmentId, '--format', 'supabase', fixture('clerk-users.csv')], env());
    expect(wrong.code).toBe(2);
    expect(wrong.output).toContain('This file is not a supabase export');
    expect(existsSync(path.join(fixtures, 'clerk-users.csv.import-state.json'))).toBe(false);
    const broken = path.join(work, 'broken.csv');
    writeFileSync(broken, 'email,first_name\nada@example.com,Ada,extra\n');
    const notCsv = await runImport(['--environment', environmentId, '--format', 'csv', broken], env());
    expect(notCsv.code).toBe(2);
    expect(notCsv.output).toContain('Row 1 has 3 fields but the header has 2');
    expect(notCsv.output).not.toContain('    at ');
  });
});
