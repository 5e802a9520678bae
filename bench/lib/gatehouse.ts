/**
 * Shared by the benchmarks: child processes on free ports, and a Gatehouse server started the way
 * an operator would start it (the built server, silent logs), with a production environment whose rate
 * limit is lifted and one user who signs in with a password.
 */
import type autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PASSWORD = 'correct horse battery staple';
/**
 * The server as `npm start` runs it: built JavaScript (`npm run bench` builds it first).
 * `BENCH_SERVER_NODE_ARGS` adds options for Node, to profile it: `--cpu-prof --cpu-prof-dir=…`.
 */
export const SERVER_ARGS = [...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), 'packages/server/dist/main.js'];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not start:\n${output()}`);
}

export interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `node args…` with PORT and HOST set, and waits until `healthPath` answers 2xx. */
export async function startChild(args: string[], env: Record<string, string>, healthPath: string): Promise<Server> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}${healthPath}`, child, () => output);
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function json(url: string, init: { method?: string; token?: string; body?: unknown } = {}) {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export interface GatehouseOptions {
  databaseUrl?: string | undefined;
  /** PostgreSQL: the schema the server creates and uses (DATABASE_SCHEMA). */
  databaseSchema?: string | undefined;
  redisUrl?: string | undefined;
  /** Servers over one database must share it. */
  instanceSecret: string;
}

export interface Gatehouse {
  server: Server;
  publishableKey: string;
  email: string;
  /** The access token of the user's first session. */
  accessToken: string;
  stop(): Promise<void>;
}

export interface BenchServer {
  server: Server;
  platformKey: string;
  /** The server's data directory (its SQLite file, when there is no DATABASE_URL). */
  dataDir: string;
  stop(): Promise<void>;
}

/** The built server on a fresh data directory (or PostgreSQL schema), with a platform key of its own. */
export async function startBenchServer(options: Partial<GatehouseOptions> = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-'));
  const platformKey = `plk_${randomBytes(32).toString('base64url')}`;
  try {
    const server = await startChild(
      SERVER_ARGS,
      {
        GATEHOUSE_DATA_DIR: dataDir,
        GATEHOUSE_PLATFORM_KEY: platformKey,
        GATEHOUSE_SECRET: options.instanceSecret ?? randomBytes(48).toString('base64url'),
        LOG_LEVEL: 'silent',
        DATABASE_URL: options.databaseUrl ?? '',
        DATABASE_SCHEMA: options.databaseSchema ?? '',
        REDIS_URL: options.redisUrl ?? '',
        GATEHOUSE_REDIS_PREFIX: `bench-${randomBytes(4).toString('hex')}:`,
      },
      '/v1/health',
    );
    const stop = async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
    return { server, platformKey, dataDir, stop };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A new project's environment of that type, with its rate limit lifted (benchmarks measure the work)
 * and sign-up verification off (they sign up with a password and use the session at once).
 */
export async function benchEnvironment(bench: BenchServer, type: 'development' | 'production') {
  const { server, platformKey } = bench;
  const project = await json(`${server.url}/v1/platform/projects`, { method: 'POST', token: platformKey, body: { name: 'bench' } });
  const environment = project.environments.find((e: { type: string }) => e.type === type);
  await json(`${server.url}/v1/platform/environments/${environment.id}`, {
    method: 'PATCH',
    token: platformKey,
    body: { rateLimitPerMinute: 10_000_000, emailVerification: 'off' },
  });
  return environment as { id: string; publishableKey: string; secretKey: string };
}

export async function startGatehouse(options: GatehouseOptions): Promise<Gatehouse> {
  const bench = await startBenchServer(options);
  try {
    const environment = await benchEnvironment(bench, 'production');
    const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
    const signedUp = await json(`${bench.server.url}/v1/auth/signup`, {
      method: 'POST',
      token: environment.publishableKey,
      body: { email, password: PASSWORD },
    });
    return {
      server: bench.server,
      publishableKey: environment.publishableKey,
      email,
      accessToken: signedUp.session.accessToken as string,
      stop: bench.stop,
    };
  } catch (error) {
    await bench.stop();
    throw error;
  }
}

/**
 * A load of real rotations: `refill` signs the user in once per connection, and each request of
 * `options` takes a refresh token from that pool while its answer puts the successor back. Refill
 * before each round: requests cut off at a round's end lose their successors.
 */
export function rotatingRefreshes(serverUrl: string, publishableKey: string, email: string, connections: number) {
  const pool: string[] = [];
  const options: autocannon.Options = {
    url: `${serverUrl}/v1/auth/refresh`,
    connections,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${publishableKey}`, 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ refreshToken: pool.shift() }) }),
        onResponse: (status, body) => {
          // The load generator shares the cores: the successor is read, not the whole answer parsed.
          if (status === 200) pool.push(/"refreshToken":"([^"]+)"/.exec(body)![1]!);
        },
      },
    ],
  };
  return {
    async refill(): Promise<void> {
      pool.length = 0;
      for (let i = 0; i < connections; i++) {
        const signedIn = await json(`${serverUrl}/v1/auth/signin`, {
          method: 'POST',
          token: publishableKey,
          body: { email, password: PASSWORD },
        });
        pool.push(signedIn.session.refreshToken);
      }
    },
    options,
  };
}
