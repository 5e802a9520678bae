/**
 * Users imported per second through POST /v1/users/import, 1,000 rows a call, each with a bcrypt
 * digest (cost 10, as Supabase and most bcrypt users have): an import stores the digest as it
 * came and hashes nothing, so this is the rate of validation, inserts and their user.created events.
 * For scale, the same rows sent one by one to POST /v1/users. The server is the built one; SQLite,
 * and PostgreSQL too when DATABASE_URL is set (a schema of its own, dropped afterwards).
 */
import bcrypt from 'bcryptjs';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openStore } from '../packages/server/src/db/index.js';
import { benchEnvironment, json, startBenchServer } from './lib/gatehouse.js';
import { loadLine } from './lib/machine.js';
import { median } from './lib/median.js';

const USERS = Number(process.env.BENCH_IMPORT_USERS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = 1000;
/** One digest for every row: the import never verifies it, so its cost is not part of the rate. */
const DIGEST = bcrypt.hashSync('imported password', 10);

function rows(count: number, tag: string) {
  return Array.from({ length: count }, (_, i) => ({
    email: `import${i}.${tag}@example.test`,
    externalId: `legacy-${tag}-${i}`,
    firstName: 'Imported',
    passwordDigest: DIGEST,
    passwordHasher: 'bcrypt' as const,
    emailVerified: true,
  }));
}

async function onDatabase(label: string, databaseUrl: string | undefined) {
  const schema = `gh_bench_import_${randomBytes(4).toString('hex')}`;
  const bench = await startBenchServer({ databaseUrl, databaseSchema: databaseUrl ? schema : undefined });
  try {
    const environment = await benchEnvironment(bench, 'production');
    const base = bench.server.url;
    console.log(`  -- ${label}`);
    const bulk: number[] = [];
    const single: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const load = loadLine();
      const users = rows(USERS, `${round}${randomBytes(3).toString('hex')}`);
      let started = performance.now();
      for (let i = 0; i < users.length; i += BATCH) {
        const result = await json(`${base}/v1/users/import`, {
          method: 'POST',
          token: environment.secretKey,
          body: { users: users.slice(i, i + BATCH) },
        });
        const failed = (result.data as { error?: unknown }[]).filter((r) => r.error);
        if (failed.length > 0) throw new Error(`import rows failed: ${JSON.stringify(failed[0])}`);
      }
      bulk.push((users.length / (performance.now() - started)) * 1000);
      // The same kind of rows one request each, for scale (a tenth as many).
      const few = rows(Math.max(10, Math.floor(USERS / 10)), `single${round}${randomBytes(3).toString('hex')}`);
      started = performance.now();
      for (const user of few) await json(`${base}/v1/users`, { method: 'POST', token: environment.secretKey, body: user });
      single.push((few.length / (performance.now() - started)) * 1000);
      console.log(
        `  round ${round + 1} (${load}): ${bulk.at(-1)!.toFixed(0)} users/s imported (${USERS} in calls of ${BATCH}), ` +
          `${single.at(-1)!.toFixed(0)} users/s one POST /v1/users at a time`,
      );
    }
    console.log(`  median: ${median(bulk).toFixed(0)} users/s imported, ${(median(bulk) / median(single)).toFixed(1)}× one at a time`);
  } finally {
    await bench.stop();
    if (databaseUrl) {
      const store = openStore({ databaseUrl, postgresSchema: schema });
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
      await store.close();
    }
  }
}

export async function run(): Promise<void> {
  console.log(`  bcrypt digests (cost 10), no rehash at import; ${USERS} users per round, ${ROUNDS} rounds`);
  await onDatabase('SQLite', undefined);
  if (process.env.DATABASE_URL) await onDatabase('PostgreSQL', process.env.DATABASE_URL);
}
