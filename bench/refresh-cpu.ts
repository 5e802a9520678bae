/**
 * Where a refresh's CPU goes: `npm run bench:refresh-cpu` (Linux only: it reads /proc).
 *
 * identity.bench.ts prints the refresh ratio (rotations per second ÷ raw RS256 signatures per second
 * on one core); this explains it. Rounds of real rotations at `BENCH_REFRESH_CONNECTIONS` clients (32;
 * each answer's successor is the connection's next token), each followed by a raw signing run, and
 * for each round the CPU per rotation of the server's event loop, of its other threads (the signature
 * thread, V8's helpers), of PostgreSQL and Redis, and of the load generator, with the share of time
 * the cores sat idle. With every core busy, rate = cores × (1 − idle) ÷ CPU per rotation. On SQLite,
 * and on PostgreSQL (+ Redis) when DATABASE_URL (and REDIS_URL) are set.
 */
import autocannon from 'autocannon';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openStore } from '../packages/server/src/db/index.js';
import { rotatingRefreshes, startGatehouse } from './lib/gatehouse.js';
import { loadLine, machineLine, machineTicks, processCpuSeconds, threadSeconds } from './lib/machine.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_REFRESH_CONNECTIONS ?? 32);
/** CPU seconds of a process's main thread and of all its threads. */
function serverSeconds(pid: number): { main: number; all: number } {
  const threads = threadSeconds(pid);
  return { main: threads.get(pid) ?? 0, all: [...threads.values()].reduce((a, b) => a + b, 0) };
}

/** Raw RS256 signatures per second on this thread, the signing input of a real token's size. */
function rawSignaturesPerSecond(): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const input = Buffer.from('x'.repeat(420));
  const end = performance.now() + Math.min(SECONDS, 2) * 1000;
  let count = 0;
  const start = performance.now();
  while (performance.now() < end) {
    sign('sha256', input, privateKey);
    count++;
  }
  return count / ((performance.now() - start) / 1000);
}

async function onDeployment(label: string, databaseUrl: string | undefined, redisUrl: string | undefined) {
  const schema = `bench_refresh_${randomBytes(4).toString('hex')}`;
  const admin = databaseUrl ? openStore({ databaseUrl, postgresSchema: schema }) : undefined;
  if (admin) await migrate(admin, schema);
  const gatehouse = await startGatehouse({
    databaseUrl,
    databaseSchema: databaseUrl ? schema : undefined,
    redisUrl,
    instanceSecret: randomBytes(48).toString('base64url'),
  });
  const url = gatehouse.server.url;
  const pid = gatehouse.server.child.pid!;
  console.log(`  -- ${label}, ${CONNECTIONS} clients`);
  try {
    const rotations = rotatingRefreshes(url, gatehouse.publishableKey, gatehouse.email, CONNECTIONS);
    for (let round = 0; round <= ROUNDS; round++) {
      await rotations.refill();
      const load = loadLine();
      const before = {
        server: serverSeconds(pid),
        postgres: processCpuSeconds('postgres'),
        redis: processCpuSeconds('redis-server'),
        self: process.cpuUsage(),
        stat: machineTicks(),
      };
      const result = await autocannon({ ...rotations.options, duration: SECONDS });
      const n = Math.max(1, result.requests.total);
      const server = serverSeconds(pid);
      const self = process.cpuUsage(before.self);
      const stat = machineTicks();
      const us = (seconds: number) => `${((seconds * 1e6) / n).toFixed(0)} µs`;
      const idle = ((stat.idle - before.stat.idle) / Math.max(1, stat.total - before.stat.total)) * 100;
      const raw = rawSignaturesPerSecond();
      // Round 0 warms the server up (JIT, statements, the signature thread): not reported.
      if (round === 0) continue;
      console.log(
        `  round ${round} (${load}): ${result.requests.average.toFixed(0)} rotations/s, raw RS256 ${raw.toFixed(0)}/s, ` +
          `ratio ${(result.requests.average / raw).toFixed(2)}${result.non2xx ? ` (non-2xx ${result.non2xx})` : ''}; CPU per rotation: ` +
          `event loop ${us(server.main - before.server.main)}, other server threads ${us(server.all - server.main - (before.server.all - before.server.main))}, ` +
          `postgres ${us(processCpuSeconds('postgres') - before.postgres)}, redis-server ${us(processCpuSeconds('redis-server') - before.redis)}, ` +
          `load generator ${us((self.user + self.system) / 1e6)}; cores idle ${idle.toFixed(1)} %`,
      );
    }
  } finally {
    await gatehouse.stop();
    if (admin) {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
      await admin.close();
    }
  }
}

console.log(`Refresh CPU on ${machineLine()}`);
await onDeployment('SQLite', undefined, undefined);
if (process.env.DATABASE_URL) {
  await onDeployment(process.env.REDIS_URL ? 'PostgreSQL + Redis' : 'PostgreSQL', process.env.DATABASE_URL, process.env.REDIS_URL);
}
