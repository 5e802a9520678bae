/**
 * Where a sign-in's CPU goes: `npm run bench:sign-in-cpu` (Linux only: it reads /proc).
 *
 * identity.bench.ts prints the sign-in ratio; this explains it. For raw argon2id verification at
 * the sign-in concurrency, then for Gatehouse sign-in at that many connections and at twice as many
 * (the server still hashes at most that many at once: its thread pool), it prints the CPU spent per
 * operation by each process on the machine, and the share of time the cores sat idle. With every
 * core busy, rate = cores × (1 − idle) ÷ CPU per operation, so a ratio below 1 is made of exactly
 * these parts. Runs on SQLite, and on PostgreSQL (+ Redis) when DATABASE_URL (and REDIS_URL) are set.
 */
import { verify as argon2Verify } from '@node-rs/argon2';
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { hashPassword } from '../packages/server/src/identity/passwords.js';
import { json, PASSWORD, startGatehouse } from './lib/gatehouse.js';
import { machineTicks, pidsNamed, threadSeconds } from './lib/machine.js';

const HASH_CONCURRENCY = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 3);
type Part =
  | 'server main thread'
  | 'server other threads'
  | 'postgres'
  | 'redis-server'
  | 'load generator'
  | 'hashing threads'
  | 'hashing loop (main thread)';

interface Snapshot {
  seconds: Map<string, { part: Part; seconds: number }>;
  machineTicks: number;
  idleTicks: number;
}

/** Every thread of interest, labelled with the part of the work it does. */
function snapshot(serverPid: number | undefined): Snapshot {
  const seconds = new Map<string, { part: Part; seconds: number }>();
  const add = (pid: number, part: (tid: number) => Part) => {
    for (const [tid, s] of threadSeconds(pid)) seconds.set(`${pid}/${tid}`, { part: part(tid), seconds: s });
  };
  if (serverPid !== undefined) {
    add(serverPid, (tid) => (tid === serverPid ? 'server main thread' : 'server other threads'));
    add(process.pid, () => 'load generator');
  } else {
    add(process.pid, (tid) => (tid === process.pid ? 'hashing loop (main thread)' : 'hashing threads'));
  }
  for (const pid of pidsNamed('postgres')) add(pid, () => 'postgres');
  for (const pid of pidsNamed('redis-server')) add(pid, () => 'redis-server');
  const ticks = machineTicks();
  return { seconds, machineTicks: ticks.total, idleTicks: ticks.idle };
}

interface Breakdown {
  rate: number;
  idle: number;
  perOperation: Map<Part, number>;
}

async function measure(serverPid: number | undefined, work: () => Promise<number>): Promise<Breakdown> {
  const before = snapshot(serverPid);
  const started = performance.now();
  const operations = await work();
  const elapsed = (performance.now() - started) / 1000;
  const after = snapshot(serverPid);
  const perOperation = new Map<Part, number>();
  for (const [key, { part, seconds }] of after.seconds) {
    const used = seconds - (before.seconds.get(key)?.seconds ?? 0);
    perOperation.set(part, (perOperation.get(part) ?? 0) + (used * 1000) / operations);
  }
  return {
    rate: operations / elapsed,
    idle: (after.idleTicks - before.idleTicks) / (after.machineTicks - before.machineTicks),
    perOperation,
  };
}

const PARTS: Part[] = [
  'hashing threads',
  'hashing loop (main thread)',
  'server other threads',
  'server main thread',
  'postgres',
  'redis-server',
  'load generator',
];

function print(label: string, result: Breakdown, raw?: Breakdown): void {
  const total = [...result.perOperation.values()].reduce((a, b) => a + b, 0);
  const parts = PARTS.filter((part) => (result.perOperation.get(part) ?? 0) >= 0.005)
    .map((part) => `${part} ${result.perOperation.get(part)!.toFixed(2)}`)
    .join(', ');
  const ratio = raw ? `   ratio ${(result.rate / raw.rate).toFixed(2)}` : '';
  console.log(
    `  ${label.padEnd(40)} ${result.rate.toFixed(0).padStart(5)}/s${ratio.padEnd(14)} idle ${(result.idle * 100).toFixed(1).padStart(4)} %`,
  );
  console.log(`      CPU ms per operation: ${total.toFixed(2)} = ${parts}`);
}

async function rawHashing(stored: string): Promise<Breakdown> {
  return measure(undefined, async () => {
    const end = performance.now() + SECONDS * 1000;
    let count = 0;
    await Promise.all(
      Array.from({ length: HASH_CONCURRENCY }, async () => {
        while (performance.now() < end) {
          await argon2Verify(stored, PASSWORD);
          count++;
        }
      }),
    );
    return count;
  });
}

async function signIns(
  deployment: { label: string; databaseUrl?: string; databaseSchema?: string; redisUrl?: string },
  stored: string,
): Promise<void> {
  const gatehouse = await startGatehouse({ ...deployment, instanceSecret: randomBytes(48).toString('base64url') });
  try {
    // One account per connection: sign-in throttling counts an account's attempts while they are in
    // flight, so more than five at once on one account would be (rightly) refused.
    const emails = [gatehouse.email];
    while (emails.length < 2 * HASH_CONCURRENCY) {
      const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
      await json(`${gatehouse.server.url}/v1/auth/signup`, {
        method: 'POST',
        token: gatehouse.publishableKey,
        body: { email, password: PASSWORD },
      });
      emails.push(email);
    }
    let next = 0;
    const load = (connections: number, duration: number) =>
      autocannon({
        url: `${gatehouse.server.url}/v1/auth/signin`,
        method: 'POST',
        connections,
        duration,
        headers: { authorization: `Bearer ${gatehouse.publishableKey}`, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({ email: emails[next++ % emails.length], password: PASSWORD }),
            }),
          },
        ],
      });
    await load(HASH_CONCURRENCY, WARM_UP_SECONDS);
    console.log(`  -- ${deployment.label}`);
    for (const connections of [HASH_CONCURRENCY, 2 * HASH_CONCURRENCY]) {
      const raw = await rawHashing(stored); // alternated, so both sides see the same machine
      print(`raw argon2id verify (c=${HASH_CONCURRENCY})`, raw);
      const result = await measure(gatehouse.server.child.pid!, async () => {
        const outcome = await load(connections, SECONDS);
        if (outcome.non2xx || outcome.errors) throw new Error(`sign-in failed: ${outcome.non2xx} non-2xx, ${outcome.errors} errors`);
        return outcome.requests.total;
      });
      print(`sign-in, ${connections} connections`, result, raw);
    }
  } finally {
    await gatehouse.stop();
  }
}

export async function run(): Promise<void> {
  if (!existsSync('/proc/stat')) {
    console.log('  skipped: this breakdown reads /proc, so it needs Linux');
    return;
  }
  console.log(
    `  ${os.cpus().length} cores; ${SECONDS} s per measurement after ${WARM_UP_SECONDS} s of warm-up; server thread pool ${HASH_CONCURRENCY}; CPU of every thread of the server, of this process (the load generator, or the raw hashing) and of every postgres and redis-server process`,
  );
  const stored = await hashPassword(PASSWORD);
  await signIns({ label: 'SQLite' }, stored);
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return;
  // The server creates and uses its own schema; it is dropped afterwards.
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const { openStore } = await import('../packages/server/src/db/index.js');
  const admin = openStore({ databaseUrl });
  try {
    const redisUrl = process.env.REDIS_URL;
    await signIns(
      { label: redisUrl ? 'PostgreSQL + Redis' : 'PostgreSQL', databaseUrl, databaseSchema: schema, ...(redisUrl ? { redisUrl } : {}) },
      stored,
    );
  } finally {
    const { sql } = await import('kysely');
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
