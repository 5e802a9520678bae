/**
 * Child process of ratelimit.bench.ts: the same app three times, without the limiter, with the
 * memory limiter and (when REDIS_URL is set) with Redis, each on its own port, so the load
 * generator runs on the other core. Prints one JSON line with the ports and a publishable key.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildApp, type AppOptions } from '../packages/server/src/app.js';
import { migrate, openStore } from '../packages/server/src/db/index.js';
import { FilesystemObjectStore } from '../packages/server/src/assets/filesystem-store.js';
import { UnconfiguredTransport } from '../packages/server/src/flows/transport.js';
import { newSecret } from '../packages/server/src/lib/crypto.js';
import { deriveSubkey } from '../packages/server/src/lib/cursor.js';
import { TenancyService } from '../packages/server/src/tenancy/service.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-'));
const store = openStore({ sqliteFile: path.join(dir, 'bench.db') });
await migrate(store);
const tenancy = new TenancyService(store);
const { environments } = await tenancy.createProject({ name: 'Bench' });
const dev = environments.find((e) => e.environment.type === 'development')!.environment;
// High enough that nothing is refused: the benchmark measures the cost of counting.
await tenancy.updateSettings(dev.id, { rateLimitPerMinute: 10_000_000 });

const instanceSecret = newSecret('', 48);
const objectStore = await FilesystemObjectStore.open({
  root: path.join(dir, 'objects'),
  baseUrl: 'http://bench.local',
  signingKey: deriveSubkey(instanceSecret, 'uploads'),
});
// Everything buildApp needs, and nothing the measured requests touch: no mail is sent, no worker runs.
const base: AppOptions = {
  config: { baseUrl: 'http://bench.local' },
  store,
  platformKey: newSecret('plk_'),
  instanceSecret,
  objectStore,
  mail: { transport: new UnconfiguredTransport(), startWorker: false },
};
const variants: Record<string, Partial<AppOptions>> = { baseline: { rateLimit: false }, memory: {} };
const redisPrefix = `ghbench:${randomBytes(4).toString('hex')}:`;
if (process.env.REDIS_URL) variants.redis = { redis: { url: process.env.REDIS_URL, prefix: redisPrefix } };

const ports: Record<string, number> = {};
for (const [name, options] of Object.entries(variants)) {
  const app = await buildApp({ ...base, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  ports[name] = typeof address === 'object' && address ? address.port : 0;
}
process.stdout.write(`${JSON.stringify({ ports, publishableKey: dev.publishableKey, environmentId: dev.id, redisPrefix })}\n`);
process.on('SIGTERM', () => {
  // Drop this run's Redis keys; never flush a shared Redis.
  void (async () => {
    if (process.env.REDIS_URL) {
      const { Redis } = await import('ioredis');
      const redis = new Redis(process.env.REDIS_URL);
      const keys = await redis.keys(`${redisPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    process.exit(0);
  })();
});
