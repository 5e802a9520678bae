/**
 * A million users: search (`GET /v1/users?query=`), paging (`GET /v1/users?limit=100` followed by
 * its cursors), `GET /v1/me` and sign-in, at 10k, 100k and 1M users in one environment
 * (`BENCH_USER_SIZES`, comma-separated). Users are bulk-inserted straight into the database, not
 * through the API (a million sign-ups would take hours of argon2); the server is the built one.
 * SQLite, and PostgreSQL when DATABASE_URL is set. Goals at 1M: search ≥ 2,000/s, ≤ 3 ms a page.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../packages/server/src/db/index.js';
import { emailKey } from '../packages/server/src/identity/email.js';
import { searchText } from '../packages/server/src/identity/search.js';
import { newId } from '../packages/server/src/lib/crypto.js';
import type { EnvironmentId } from '../packages/server/src/lib/ids.js';
import { benchEnvironment, json, PASSWORD, startBenchServer } from './lib/gatehouse.js';
import { loadLine } from './lib/machine.js';
import { median } from './lib/median.js';

const SIZES = (process.env.BENCH_USER_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const PAGES = Number(process.env.BENCH_PAGES ?? 50);
const WARM_UP_SECONDS = Number(process.env.BENCH_RATE_WARM_UP_SECONDS ?? 0.5);
const FIRST = ['Ada', 'Alan', 'Grace', 'Emile', 'Hedy', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Radia', 'Tim'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Zola', 'Lamarr', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Perlman', 'Lee'];

/** Inserts users up to `total`, in multi-row statements inside transactions of 10,000. */
async function seed(store: Store, environmentId: EnvironmentId, from: number, total: number): Promise<number> {
  const started = performance.now();
  const batch = store.dialect === 'sqlite' ? 500 : 1000;
  for (let start = from; start < total; start += 10_000) {
    await store.db.transaction().execute(async (tx) => {
      for (let i = start; i < Math.min(start + 10_000, total); i += batch) {
        const rows = [];
        for (let j = i; j < Math.min(i + batch, start + 10_000, total); j++) {
          const email = `user${j}.${randomBytes(3).toString('hex')}@seed.test`;
          const row = {
            environment_id: environmentId,
            id: newId('user', environmentId),
            email,
            email_key: emailKey(email),
            email_collision: 0,
            username: j % 3 === 0 ? `handle${j}` : null,
            first_name: FIRST[j % FIRST.length]!,
            last_name: LAST[(j * 7) % LAST.length]!,
            image_url: null,
            password_hash: null,
            email_verified: 0,
            banned: 0,
            two_factor_enabled: 0,
            public_metadata: '{}',
            private_metadata: '{}',
            unsafe_metadata: '{}',
            created_at: Date.now(),
            updated_at: Date.now(),
          };
          rows.push({ ...row, search_text: searchText(row) });
        }
        await tx.insertInto('users').values(rows).execute();
      }
    });
  }
  // As a database settles after a bulk load: otherwise autovacuum and the trigram index's pending
  // list are flushed in the background while the rates are measured.
  if (store.dialect === 'postgres') await sql`vacuum analyze users`.execute(store.db);
  return ((total - from) / (performance.now() - started)) * 1000;
}

async function rate(url: string, token: string, init: { method?: string; body?: string; warmUpBody?: string; connections?: number } = {}) {
  const options = {
    url,
    method: (init.method ?? 'GET') as 'GET',
    connections: init.connections ?? 8,
    headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    ...(init.body ? { body: init.body } : {}),
  };
  // Warmed first: a route compiles its validator and serializer on its first request, and the
  // JIT and SQLite's page cache settle; a cold first second would halve a 2 s rate.
  // Sign-ins warm up on another account: the warm-up's last ones may still be hashing when the
  // measurement starts, and throttling counts an account's attempts in flight.
  await autocannon({ ...options, ...(init.warmUpBody ? { body: init.warmUpBody } : {}), duration: WARM_UP_SECONDS });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const result = await autocannon({ ...options, duration: SECONDS });
  if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.average;
}

/** GET on one kept-alive connection, the body as text: the client's own cost stays out of the time. */
function getText(agent: http.Agent, url: string, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          response.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${response.statusCode} ${body}`)),
        );
      })
      .on('error', reject);
  });
}

/** Walks pages of 100 by their cursors, one request at a time: the median time of a page. */
async function pageMs(base: string, secretKey: string): Promise<number> {
  // A connection of its own for each walk: the server closes one left idle (while the next size seeds).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < PAGES; page++) {
      const started = performance.now();
      const body = await getText(agent, `${base}/v1/users?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, secretKey);
      times.push(performance.now() - started);
      cursor = /"nextCursor":"([^"]+)"/.exec(body)?.[1];
      if (!cursor) break;
    }
  } finally {
    agent.destroy();
  }
  return median(times);
}

async function onDatabase(label: string, databaseUrl: string | undefined) {
  const schema = `gh_bench_users_${randomBytes(4).toString('hex')}`;
  const bench = await startBenchServer({ databaseUrl, databaseSchema: databaseUrl ? schema : undefined });
  const { server } = bench;
  const store = openStore(databaseUrl ? { databaseUrl, postgresSchema: schema } : { sqliteFile: path.join(bench.dataDir, 'gatehouse.db') });
  try {
    const environment = await benchEnvironment(bench, 'development');
    const [email, warmUpEmail] = ['probe', 'warm-up'].map((name) => `${name}-${randomBytes(4).toString('hex')}@example.test`);
    const signUp = (address: string, lastName: string) =>
      json(`${server.url}/v1/auth/signup`, {
        method: 'POST',
        token: environment.publishableKey,
        body: { email: address, password: PASSWORD, firstName: 'Probe', lastName },
      });
    const signedUp = await signUp(email!, 'Zyxwvut'); // the one row the rare search finds
    await signUp(warmUpEmail!, 'Warm-up');
    console.log(`  -- ${label}`);
    let seeded = 0;
    for (const size of SIZES) {
      const perSecond = await seed(store, environment.id as EnvironmentId, seeded, size);
      seeded = size;
      const load = loadLine();
      const base = server.url;
      const sk = environment.secretKey as string;
      // Pages first: a rate leaves its last requests' queries running for a moment after it ends,
      // and the two-letter scans at a million users would still be busy in the database.
      await pageMs(base, sk); // the first walk warms the route and the pages it reads
      const page = await pageMs(base, sk);
      const someone = await store.db
        .selectFrom('users')
        .select('email')
        .where('environment_id', '=', environment.id as EnvironmentId)
        .orderBy('id')
        .offset(Math.floor(size / 2))
        .limit(1)
        .executeTakeFirstOrThrow();
      const byEmail = await rate(`${base}/v1/users?email=${encodeURIComponent(someone.email)}`, sk);
      const rare = await rate(`${base}/v1/users?query=zyxwvut`, sk);
      const common = await rate(`${base}/v1/users?query=lovelace`, sk);
      const me = await rate(`${base}/v1/me`, signedUp.session.accessToken);
      // Four at once: sign-in throttling counts an account's attempts in flight (five are free).
      const signIn = await rate(`${base}/v1/auth/signin`, environment.publishableKey, {
        method: 'POST',
        body: JSON.stringify({ email, password: PASSWORD }),
        warmUpBody: JSON.stringify({ email: warmUpEmail, password: PASSWORD }),
        connections: 4,
      });
      const short = await rate(`${base}/v1/users?query=zy`, sk);
      console.log(
        `  ${String(size).padStart(9)} users (seeded at ${perSecond.toFixed(0)}/s; ${load}): search rare ${rare.toFixed(0)}/s, ` +
          `common ${common.toFixed(0)}/s, two letters ${short.toFixed(0)}/s; by email ${byEmail.toFixed(0)}/s; a page of 100 ${page.toFixed(1)} ms (median of ${PAGES}); ` +
          `GET /v1/me ${me.toFixed(0)}/s; sign-in ${signIn.toFixed(0)}/s`,
      );
    }
  } finally {
    await bench.stop();
    if (databaseUrl) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
    await store.close();
  }
}

export async function run(): Promise<void> {
  console.log(`  search goal ≥ 2,000/s and a page ≤ 3 ms at 1,000,000 users; sizes ${SIZES.join(', ')}; ${SECONDS} s per rate`);
  await onDatabase('SQLite', undefined);
  if (process.env.DATABASE_URL) await onDatabase('PostgreSQL', process.env.DATABASE_URL);
}
