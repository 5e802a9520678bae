/**
 * Webhook benchmarks, as ratios measured in the same run on this machine:
 *   - outbox write overhead: what recording the event adds to a user insert (its own transaction and
 *     the event row), in process, as a share of the server time of one POST /v1/users (1 / req/s at
 *     saturation) to a server process
 *   - events/s from commit to the receiver's 200 (receiver local), against the rate POST /v1/users
 *     commits them at: the worker keeps up when the ratio is near 1
 * SQLite, and PostgreSQL too when DATABASE_URL is set (a schema of its own, dropped afterwards).
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { migrate, openStore, type Store } from '../packages/server/src/db/index.js';
import { emailKey } from '../packages/server/src/identity/email.js';
import { insertUser, type UserRow } from '../packages/server/src/identity/queries.js';
import { searchText } from '../packages/server/src/identity/search.js';
import type { EnvironmentId } from '../packages/server/src/lib/ids.js';
import { newId } from '../packages/server/src/lib/crypto.js';
import { TenancyService } from '../packages/server/src/tenancy/service.js';
import { benchEnvironment, json, startBenchServer } from './lib/gatehouse.js';
import { loadLine } from './lib/machine.js';
import { median } from './lib/median.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);

function userRow(environmentId: EnvironmentId): Omit<UserRow, 'environment_id'> {
  const email = `u${randomBytes(6).toString('hex')}@example.test`;
  const now = Date.now();
  return {
    id: newId('user', environmentId),
    email,
    email_key: emailKey(email),
    email_collision: 0,
    username: null,
    first_name: 'Bench',
    last_name: null,
    image_url: null,
    password_hash: null,
    email_verified: 0,
    banned: 0,
    public_metadata: '{}',
    private_metadata: '{}',
    unsafe_metadata: '{}',
    external_id: null,
    last_sign_in_at: null,
    two_factor_enabled: 0,
    created_at: now,
    updated_at: now,
  };
}

/** The same row as insertUser writes (search text included), without its event. */
function bareRow(environmentId: EnvironmentId) {
  const row = { ...userRow(environmentId), environment_id: environmentId };
  return { ...row, search_text: searchText(row) };
}

/**
 * Microseconds per insert, 8 in flight like the HTTP run below: the bare statement (what insertUser
 * did before events) and insertUser with its event. Alternated, ROUNDS times each, medians.
 */
async function insertCosts(store: Store, environmentId: EnvironmentId) {
  const per = async (op: () => Promise<unknown>) => {
    const n = 800;
    let left = n;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) await op();
      }),
    );
    return ((performance.now() - start) * 1000) / n;
  };
  const bare: number[] = [];
  const withEvent: number[] = [];
  // Warm-up, not counted: the first few thousand statements of a process run before the JIT has
  // compiled the query path, and cost two to three times what they do after.
  for (let i = 0; i < 3; i++) {
    await per(() => store.db.insertInto('users').values(bareRow(environmentId)).execute());
    await per(() => insertUser(store.db, environmentId, userRow(environmentId)));
  }
  for (let round = 0; round < ROUNDS; round++) {
    const load = loadLine();
    bare.push(await per(() => store.db.insertInto('users').values(bareRow(environmentId)).execute()));
    withEvent.push(await per(() => insertUser(store.db, environmentId, userRow(environmentId))));
    console.log(
      `  round ${round + 1} (${load}): insert ${bare.at(-1)!.toFixed(0)} µs bare, ${withEvent.at(-1)!.toFixed(0)} µs with its event`,
    );
  }
  return { bareUs: median(bare), withEventUs: median(withEvent) };
}

async function startReceiver() {
  let count = 0;
  let target = Infinity;
  let reached: () => void = () => undefined;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200).end();
      if (++count >= target) reached();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get count() {
      return count;
    },
    until(n: number) {
      target = n;
      return count >= n ? Promise.resolve() : new Promise<void>((r) => (reached = r));
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function onDatabase(label: string, databaseUrl: string | undefined) {
  const schema = `gh_bench_wh_${randomBytes(4).toString('hex')}`;
  const receiver = await startReceiver();
  const bench = await startBenchServer({ databaseUrl, databaseSchema: databaseUrl ? schema : undefined });
  const { server, platformKey } = bench;
  const local = openStore(
    databaseUrl ? { databaseUrl, postgresSchema: `${schema}_local` } : { sqliteFile: path.join(bench.dataDir, 'local.db') },
  );
  try {
    // In process: the cost of the event next to the insert.
    await migrate(local, databaseUrl ? `${schema}_local` : undefined);
    const { environments } = await new TenancyService(local).createProject({ name: 'bench' });
    const { bareUs, withEventUs } = await insertCosts(local, environments[0]!.environment.id);

    // Against the server: POST /v1/users, with a development environment whose endpoint is the local receiver.
    const environment = await benchEnvironment(bench, 'development');
    const secretKey = environment.secretKey;
    const users = await autocannon({
      url: `${server.url}/v1/users`,
      method: 'POST',
      connections: 8,
      duration: SECONDS,
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      requests: [
        { setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `b${randomBytes(6).toString('hex')}@example.test` }) }) },
      ],
    });
    // The server's time per request at saturation (not the latency, which includes queueing).
    const requestUs = 1e6 / users.requests.average;

    await json(`${server.url}/v1/platform/environments/${environment.id}/webhook-endpoints`, {
      method: 'POST',
      token: platformKey,
      body: { url: receiver.url, eventTypes: ['user.created'] },
    });
    const start = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < EVENTS) {
          sent++;
          await json(`${server.url}/v1/users`, {
            method: 'POST',
            token: secretKey,
            body: { email: `w${randomBytes(6).toString('hex')}@example.test` },
          });
        }
      }),
    );
    const committedSeconds = (performance.now() - start) / 1000;
    await receiver.until(EVENTS);
    const deliveredSeconds = (performance.now() - start) / 1000;

    const overheadUs = withEventUs - bareUs;
    console.log(`${label}:`);
    console.log(`  user insert ${bareUs.toFixed(0)} µs bare, ${withEventUs.toFixed(0)} µs with its event: +${overheadUs.toFixed(0)} µs`);
    console.log(
      `  POST /v1/users ${users.requests.average.toFixed(0)} req/s (8 connections: ${requestUs.toFixed(0)} µs of server time each): the outbox adds ${((100 * overheadUs) / requestUs).toFixed(1)} % (goal ≤ 10 %)`,
    );
    console.log(
      `  ${EVENTS} user.created events: committed at ${(EVENTS / committedSeconds).toFixed(0)}/s, delivered (receiver's 200) at ${(EVENTS / deliveredSeconds).toFixed(0)}/s: ratio ${(committedSeconds / deliveredSeconds).toFixed(2)}`,
    );
  } finally {
    await receiver.close();
    if (databaseUrl) {
      // The server first: its webhook worker may be in a transaction on the tables the drop locks.
      await bench.stop();
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(local.db);
      await sql`drop schema if exists ${sql.id(`${schema}_local`)} cascade`.execute(local.db);
      await local.close();
    } else {
      // The local SQLite file lives in the server's data directory, which stopping removes.
      await local.close();
      await bench.stop();
    }
  }
}

export async function run(): Promise<void> {
  await onDatabase('SQLite', undefined);
  if (process.env.DATABASE_URL) await onDatabase('PostgreSQL', process.env.DATABASE_URL);
}
