// Used by .ci/run: fails loudly, with one line per service, when PostgreSQL or Redis is unusable.
import { Redis } from 'ioredis';
import pg from 'pg';

let failed = false;

const client = new pg.Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  await client.query('select 1');
  console.log(`ci: PostgreSQL OK (${process.env.DATABASE_URL})`);
} catch (error) {
  failed = true;
  console.error(`ci: FAILED: PostgreSQL at DATABASE_URL=${process.env.DATABASE_URL} is unusable: ${error.message}`);
} finally {
  await client.end().catch(() => {});
}

const redis = new Redis(process.env.REDIS_URL, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null });
redis.on('error', () => {}); // reported once below
try {
  await redis.connect();
  if ((await redis.ping()) !== 'PONG') throw new Error('PING did not answer PONG');
  console.log(`ci: Redis OK (${process.env.REDIS_URL})`);
} catch (error) {
  failed = true;
  console.error(`ci: FAILED: Redis at REDIS_URL=${process.env.REDIS_URL} is unusable: ${error.message}`);
} finally {
  redis.disconnect();
}

process.exit(failed ? 1 : 0);
