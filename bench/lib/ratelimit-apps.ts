/**
 * The app of the rate-limiter bench in its variants: without the limiter, with the memory store and
 * (when REDIS_URL is set) with the Redis store, over one SQLite file, one environment whose limit is
 * high enough that nothing is refused: the bench measures the cost of counting.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../packages/server/src/app.js';
import { migrate, openStore } from '../../packages/server/src/db/index.js';
import { FilesystemObjectStore } from '../../packages/server/src/assets/filesystem-store.js';
import { UnconfiguredTransport } from '../../packages/server/src/mail/transport.js';
import { newSecret } from '../../packages/server/src/lib/crypto.js';
import { deriveSubkey } from '../../packages/server/src/lib/cursor.js';
import { TenancyService } from '../../packages/server/src/tenancy/service.js';

export interface RateLimitVariants {
  apps: Record<string, FastifyInstance>;
  publishableKey: string;
  environmentId: string;
  redisPrefix: string;
  /** Closes the apps and drops this run's Redis keys (never flushes a shared Redis). */
  close(): Promise<void>;
}

export async function buildRateLimitVariants(): Promise<RateLimitVariants> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-'));
  const store = openStore({ sqliteFile: path.join(dir, 'bench.db') });
  await migrate(store);
  const tenancy = new TenancyService(store);
  const { environments } = await tenancy.createProject({ name: 'Bench' });
  const dev = environments.find((e) => e.environment.type === 'development')!.environment;
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
    webhooks: { startWorker: false },
  };
  const variants: Record<string, Partial<AppOptions>> = { baseline: { rateLimit: false }, memory: {} };
  const redisPrefix = `ghbench:${randomBytes(4).toString('hex')}:`;
  if (process.env.REDIS_URL) variants.redis = { redis: { url: process.env.REDIS_URL, prefix: redisPrefix } };

  const apps: Record<string, FastifyInstance> = {};
  for (const [name, options] of Object.entries(variants)) apps[name] = await buildApp({ ...base, ...options });
  return {
    apps,
    publishableKey: dev.publishableKey,
    environmentId: dev.id,
    redisPrefix,
    async close() {
      for (const app of Object.values(apps)) await app.close();
      if (process.env.REDIS_URL) {
        const { Redis } = await import('ioredis');
        const redis = new Redis(process.env.REDIS_URL);
        const keys = await redis.keys(`${redisPrefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
      await store.close();
    },
  };
}
