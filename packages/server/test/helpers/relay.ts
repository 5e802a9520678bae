import { Redis } from 'ioredis';
import { startTestApp, type TestApp, type TestAppOptions } from './app.js';
import { deletePrefix, REDIS_URL, testPrefix } from './redis.js';
import { openSharedTestStores } from './store.js';

export interface RelayedNodes {
  a: TestApp;
  b: TestApp;
  /** Shares the database but listens on another Redis channel: the control that hears nothing. */
  deaf: TestApp;
  /** The Redis prefix of a and b (their channel is `${prefix}changes`). */
  prefix: string;
  close(): Promise<void>;
}

/** Three in-process nodes over one database, as for cross-node cache tests; needs REDIS_URL. */
export async function startRelayedNodes(options: Omit<TestAppOptions, 'store' | 'redis'>): Promise<RelayedNodes> {
  const url = REDIS_URL;
  if (!url) throw new Error('startRelayedNodes needs REDIS_URL');
  const prefix = testPrefix();
  const [first, second, third] = await openSharedTestStores(3);
  const a = await startTestApp({ ...options, store: first!, redis: { url, prefix } });
  const b = await startTestApp({ ...options, store: second!, redis: { url, prefix } });
  const deaf = await startTestApp({ ...options, store: third!, redis: { url, prefix: testPrefix() } });
  return {
    a,
    b,
    deaf,
    prefix,
    async close() {
      await deaf.close();
      await b.close();
      await a.close();
      const redis = new Redis(url);
      await deletePrefix(redis, prefix);
      await redis.quit();
    },
  };
}
