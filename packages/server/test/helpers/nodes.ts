import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/db/index.js';
import { newSecret } from '../../src/lib/crypto.js';
import { serverProcessArgs } from './built-server.js';
import { freePort } from './redis.js';

/** One real server process, the built one `npm start` runs, as an operator would run it. */
export class ServerNode {
  private child: ChildProcess | undefined;
  readonly output: string[] = [];
  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(timeoutMs = 30_000): Promise<void> {
    const child = spawn(process.execPath, serverProcessArgs(), {
      env: { ...process.env, GATEHOUSE_BASE_URL: this.url, ...this.env, PORT: String(this.port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.on('data', (d: Buffer) => this.output.push(d.toString()));
    child.stderr!.on('data', (d: Buffer) => this.output.push(d.toString()));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`${this.name} exited with ${child.exitCode}:\n${this.output.join('')}`);
      try {
        if ((await fetch(`${this.url}/v1/health`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${this.name} did not become healthy:\n${this.output.join('')}`);
  }

  /** SIGKILL: no shutdown hooks, as in a crash. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }

  fetch(pathname: string, init: RequestInit & { credential?: string } = {}): Promise<Response> {
    const { credential, headers, ...rest } = init;
    return fetch(`${this.url}${pathname}`, {
      ...rest,
      headers: {
        ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        ...(rest.body ? { 'content-type': 'application/json' } : {}),
        ...(headers as Record<string, string> | undefined),
      },
    });
  }
}

/**
 * N server processes behind one public URL, sharing one PostgreSQL schema (fresh per cluster, dropped on stop) and one
 * Redis under a fresh key prefix, with the same instance secret and platform key.
 */
export class Cluster {
  readonly schema = `gh_nodes_${randomBytes(5).toString('hex')}`;
  readonly redisPrefix = `ghtest:${randomBytes(5).toString('hex')}:`;
  readonly platformKey = newSecret('plk_');
  /** The load balancer's public URL, shared by every node as in production: it roots every token's `iss`. */
  readonly baseUrl = 'http://gatehouse.nodes.test';
  readonly nodes: ServerNode[] = [];
  private readonly dirs: string[] = [];
  private store: Store | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly redisUrl: string,
  ) {}

  async start(count: number): Promise<ServerNode[]> {
    const secret = newSecret('', 48);
    for (let i = 0; i < count; i++) {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-node-'));
      this.dirs.push(dir);
      const node = new ServerNode(String.fromCharCode(65 + i), await freePort(), {
        DATABASE_URL: this.databaseUrl,
        DATABASE_SCHEMA: this.schema,
        REDIS_URL: this.redisUrl,
        GATEHOUSE_REDIS_PREFIX: this.redisPrefix,
        GATEHOUSE_SECRET: secret,
        GATEHOUSE_PLATFORM_KEY: this.platformKey,
        GATEHOUSE_BASE_URL: this.baseUrl,
        GATEHOUSE_DATA_DIR: dir,
        LOG_LEVEL: 'warn',
      });
      // One at a time: the first creates the schema and runs the migrations.
      await node.start();
      this.nodes.push(node);
    }
    return this.nodes;
  }

  /** A direct view of the cluster's database, to check what was really written. */
  db(): Store['db'] {
    this.store ??= openStore({ databaseUrl: this.databaseUrl, postgresSchema: this.schema });
    return this.store.db;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill('SIGTERM')));
    const store = this.store ?? openStore({ databaseUrl: this.databaseUrl });
    await sql`drop schema if exists ${sql.id(this.schema)} cascade`.execute(store.db);
    await store.close();
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}
