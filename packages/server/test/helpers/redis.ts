import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL;
/** The title suffix of Redis suites, so a skip says why. */
export const REDIS_SUITE = REDIS_URL ? '(Redis)' : '(skipped: REDIS_URL unset)';

/** Whether a redis-server binary is installed, for tests that start (and kill) their own. */
export function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A key prefix no other test run (or engineer) on the shared Redis uses. */
export function testPrefix(): string {
  return `ghtest:${randomBytes(6).toString('hex')}:`;
}

/** Deletes this run's keys; never FLUSHDB on a shared Redis. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A private redis-server on a spare port, which a test may kill and start again. */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    this.child = child;
    const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    try {
      for (let i = 0; i < 100; i++) {
        // A restart reuses the port, which another process may have taken meanwhile: then this
        // redis-server exits, and whatever answers there is not it.
        if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): is port ${this.port} taken?`);
        try {
          if (probe.status !== 'ready') await probe.connect();
          const info = await probe.info('server');
          if (new RegExp(`^process_id:${child.pid}\\r?$`, 'm').test(info)) return;
          throw new Error(`another process answers on port ${this.port}`);
        } catch (error) {
          if (error instanceof Error && error.message.startsWith('another process')) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      throw new Error(`redis-server did not start on port ${this.port}`);
    } finally {
      probe.disconnect();
    }
  }

  /** SIGKILL: no goodbye to clients, as in a crash. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }
}
