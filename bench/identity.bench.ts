/**
 * Identity benchmarks. Each figure is printed as a ratio against the raw limit measured in the same
 * run, on this machine:
 *   - sign-in req/s            vs raw argon2id verifications/s (same parameters, same concurrency)
 *   - GET /v1/me req/s         vs a bare node:http server answering a fixed JSON
 *   - refresh req/s            vs raw signatures/s of the environment's algorithm (RS256)
 *   - token verification/s     vs raw crypto.verify/s (in process, same key)
 * The server runs as a child process on a free port with a temporary data directory: on SQLite,
 * and on PostgreSQL too when DATABASE_URL is set (in a schema of its own, dropped afterwards), with
 * Redis when REDIS_URL is set, as several nodes would run. Without Redis a PostgreSQL node cannot
 * hear other nodes' changes, so it caches no sessions; that case is measured for GET /v1/me too.
 */
import { verify as argon2Verify } from '@node-rs/argon2';
import autocannon from 'autocannon';
import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { migrate, openStore, type Store } from '../packages/server/src/db/index.js';
import { hashPassword } from '../packages/server/src/identity/passwords.js';
import { IdentityService } from '../packages/server/src/identity/service.js';
import { RefreshTokens } from '../packages/server/src/sessions/refresh-token.js';
import { newSessionCache } from '../packages/server/src/sessions/session-record.js';
import { SessionService } from '../packages/server/src/sessions/service.js';
import { SessionStarter } from '../packages/server/src/sessions/start.js';
import { AccessTokenIssuer } from '../packages/server/src/sessions/access-token-issuer.js';
import { SigningKeys } from '../packages/server/src/sessions/signing-keys.js';
import { AccessTokens, verifyInput } from '../packages/server/src/sessions/tokens.js';
import { TenancyService } from '../packages/server/src/tenancy/service.js';
import { UsageService } from '../packages/server/src/usage/service.js';
import { PASSWORD, rotatingRefreshes, startChild, startGatehouse } from './lib/gatehouse.js';
import { loadLine } from './lib/machine.js';
import { median } from './lib/median.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
/** Sign-in concurrency: the libuv thread pool size, where argon2 runs. */
const HASH_CONCURRENCY = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
const HTTP_CONNECTIONS = 16;
/**
 * Refresh clients at once. A rotation waits on PostgreSQL, Redis and the signature thread in turn;
 * at 16 the two cores still idle about 13 % of the time, at 32 about 7 %: the pair compares capacity
 * with capacity (the raw signer is saturated), so it saturates the server too. `BENCH_REFRESH_CONNECTIONS`.
 */
const REFRESH_CONNECTIONS = Number(process.env.BENCH_REFRESH_CONNECTIONS ?? 32);
/** Sign-in runs at ~100/s: longer rounds, so each one counts hundreds of requests. */
const SIGN_IN_SECONDS = Number(process.env.BENCH_SIGN_IN_SECONDS ?? Math.max(SECONDS, 4));
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 2);

const BARE_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ user: { id: 'user_01', email: 'ada@example.test', firstName: 'Ada', lastName: null, username: null, imageUrl: null }, organizations: [], organization: null });
http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); })
  .listen(Number(process.env.PORT), '127.0.0.1');
`;

async function cannon(options: autocannon.Options): Promise<{ rps: number; non2xx: number; errors: number }> {
  const result = await autocannon({ ...options, duration: options.duration ?? SECONDS });
  return { rps: result.requests.average, non2xx: result.non2xx, errors: result.errors };
}

/** Runs `op` with `concurrency` in flight for `seconds`; returns operations per second. */
async function rateAsync(op: () => Promise<unknown>, concurrency: number, seconds = SECONDS): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await op();
        count++;
      }
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

function rateSync(op: () => unknown, seconds = Math.min(SECONDS, 2)): number {
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let count = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) op();
    count += 50;
  }
  return count / ((performance.now() - start) / 1000);
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/**
 * For before/after comparisons, one pair on PostgreSQL (SQLite without DATABASE_URL): `BENCH_ONLY=me`
 * (with and without Redis; `BENCH_ME_ONLY=1` says the same) or `BENCH_ONLY=refresh`.
 */
const onlyPair = process.env.BENCH_ONLY ?? (process.env.BENCH_ME_ONLY === '1' ? 'me' : undefined);
if (onlyPair !== undefined && onlyPair !== 'me' && onlyPair !== 'refresh')
  throw new Error(`BENCH_ONLY is "me" or "refresh", not "${onlyPair}"`);
const ONLY: 'me' | 'refresh' | undefined = onlyPair;

/**
 * Measures the raw limit and the server alternately, ROUNDS times each, and reports the medians and
 * the median of the per-round ratios: on a shared machine the load changes from second to second,
 * and alternating short rounds exposes both sides to it alike.
 */
async function paired(
  label: string,
  rawLabel: string,
  measureRaw: () => Promise<number> | number,
  measureServer: () => Promise<{ rps: number; non2xx: number; errors: number }>,
) {
  const raws: number[] = [];
  const servers: number[] = [];
  const ratios: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const loads: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(loadLine().replace('load ', ''));
    const raw = await measureRaw();
    const server = await measureServer();
    raws.push(raw);
    servers.push(server.rps);
    ratios.push(server.rps / raw);
    non2xx += server.non2xx;
    errors += server.errors;
  }
  const rounds = `   (rounds ${ratios.map((r, i) => `${r.toFixed(2)} at load ${loads[i]}`).join(', ')})`;
  report(label, median(servers), rawLabel, median(raws), rounds + errorsNote({ non2xx, errors }), median(ratios));
}

const fmt = (n: number) => n.toFixed(0).padStart(7);
/** Prints the medians and the median of the per-round ratios (not the ratio of the medians). */
function report(label: string, measured: number, rawLabel: string, raw: number, extra: string, ratio: number) {
  console.log(`  ${label.padEnd(34)} ${fmt(measured)}/s   ${rawLabel.padEnd(30)} ${fmt(raw)}/s   ratio ${ratio.toFixed(2)}${extra}`);
}

interface RawLimits {
  /** argon2id verifications per second at HASH_CONCURRENCY. */
  hash: () => Promise<number>;
  /** RS256 signatures per second on one core. */
  sign: () => number;
  /** req/s of the bare node:http server. */
  bare: () => Promise<number>;
}

interface Deployment {
  label: string;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  redisUrl?: string | undefined;
  /** Servers over one database must share it. */
  instanceSecret: string;
  /** Only this pair. */
  only?: 'me' | 'refresh' | undefined;
}

async function httpBenchmarks(deployment: Deployment, raw: RawLimits) {
  const gatehouse = await startGatehouse(deployment);
  const { server, publishableKey: pk, email, accessToken } = gatehouse;
  try {
    console.log(`  -- ${deployment.label}`);
    // A server that has just started runs its first requests in the interpreter; warm the paths up
    // (JIT, prepared statements, caches) so that the rounds measure the steady state.
    await cannon({
      url: `${server.url}/v1/auth/signin`,
      method: 'POST',
      connections: HASH_CONCURRENCY,
      duration: WARM_UP_SECONDS,
      headers: { authorization: `Bearer ${pk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    await cannon({
      url: `${server.url}/v1/me`,
      connections: HTTP_CONNECTIONS,
      duration: WARM_UP_SECONDS,
      headers: { authorization: `Bearer ${accessToken}` },
    });
    if (deployment.only === 'me') {
      await paired('GET /v1/me', 'bare node:http fixed JSON', raw.bare, () =>
        cannon({ url: `${server.url}/v1/me`, connections: HTTP_CONNECTIONS, headers: { authorization: `Bearer ${accessToken}` } }),
      );
      return;
    }
    if (deployment.only !== 'refresh') await signInAndMe(server.url, pk, email, accessToken, raw);
    await refreshPair(server.url, pk, email, raw);
  } finally {
    await gatehouse.stop();
  }
}

async function signInAndMe(serverUrl: string, pk: string, email: string, accessToken: string, raw: RawLimits) {
  await paired('POST /v1/auth/signin', `raw argon2id verify (c=${HASH_CONCURRENCY})`, raw.hash, () =>
    cannon({
      url: `${serverUrl}/v1/auth/signin`,
      method: 'POST',
      connections: HASH_CONCURRENCY,
      duration: SIGN_IN_SECONDS,
      headers: { authorization: `Bearer ${pk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
  );

  await paired('GET /v1/me', 'bare node:http fixed JSON', raw.bare, () =>
    cannon({ url: `${serverUrl}/v1/me`, connections: HTTP_CONNECTIONS, headers: { authorization: `Bearer ${accessToken}` } }),
  );
}

async function refreshPair(serverUrl: string, pk: string, email: string, raw: RawLimits) {
  const rotations = rotatingRefreshes(serverUrl, pk, email, REFRESH_CONNECTIONS);
  // Warmed like the other pairs: the first rotations run in the interpreter.
  await rotations.refill();
  await cannon({ ...rotations.options, duration: WARM_UP_SECONDS });
  await paired('POST /v1/auth/refresh (rotating)', 'raw RS256 sign (1 core)', raw.sign, async () => {
    await rotations.refill();
    return cannon(rotations.options);
  });
}

function errorsNote(r: { non2xx: number; errors: number }): string {
  return r.non2xx || r.errors ? `   (non-2xx ${r.non2xx}, errors ${r.errors})` : '';
}

/** In-process: the server's verification of an access token against raw crypto.verify. */
async function verificationBenchmark(store: Store) {
  const now = Date.now;
  const tenancy = new TenancyService(store);
  const instanceSecret = randomBytes(48).toString('base64url');
  const keys = new SigningKeys(store, instanceSecret, now);
  const tokens = new AccessTokens(keys, 'http://bench.test', now);
  const cache = newSessionCache();
  cache.setTrusted(true);
  const sessionServices = [undefined, cache].map(
    (sessionCache) =>
      new SessionService({
        store,
        tokens,
        refreshTokens: new RefreshTokens(instanceSecret),
        usage: new UsageService(store, tenancy, now),
        now,
        cache: sessionCache,
      }),
  );
  const sessions = sessionServices[0]!;
  const acceptImageUrl = async (): Promise<string> => {
    throw new Error('the benchmark saves no image URLs');
  };
  const identity = new IdentityService({ store, sessions, acceptImageUrl, now });
  const { environments } = await tenancy.createProject({ name: 'verify-bench' });
  const environment = environments[0]!.environment;
  const user = await identity.createUser(environment, { email: 'verify@example.test' });
  // Straight to the session starter: the benchmark measures verification, not the sign-in door.
  const starter = new SessionStarter({
    store,
    issuer: new AccessTokenIssuer(store, tokens, Date.now),
    refreshTokens: new RefreshTokens(instanceSecret),
    usage: new UsageService(store, tenancy, now),
    now,
  });
  const { accessToken } = (await starter.start(environment, user.id, { verified: ['pwd'] }, { origin: undefined })).tokens;

  const [h, p, s] = accessToken.split('.') as [string, string, string];
  const key = await keys.verificationKey(environment.id, JSON.parse(Buffer.from(h, 'base64url').toString()).kid);
  const data = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s, 'base64url');
  if (!key || key === 'revoked' || !verifyInput(key.alg, data, key.publicKey, signature)) throw new Error('bench token does not verify');

  const uncached = new AccessTokens(keys, 'http://bench.test', now, 0);
  const rawVerify = () => rateSync(() => verify('sha256', data, key.publicKey, signature), 1);
  const asResult = async (rps: Promise<number>) => ({ rps: await rps, non2xx: 0, errors: 0 });
  await paired('token verify, uncached (all checks)', 'raw crypto.verify RS256', rawVerify, () =>
    asResult(rateAsync(() => uncached.verify(accessToken), 1, 1)),
  );
  await paired(`/v1/me credential check, read (${store.dialect})`, 'raw crypto.verify RS256', rawVerify, () =>
    asResult(rateAsync(() => sessions.verifyAccessToken(accessToken), 1, 1)),
  );
  await paired(`/v1/me credential check, cached`, 'raw crypto.verify RS256', rawVerify, () =>
    asResult(rateAsync(() => sessionServices[1]!.verifyAccessToken(accessToken), 1, 1)),
  );
}

export async function run(): Promise<void> {
  console.log(
    `  ${ROUNDS} alternating rounds per pair, ${SECONDS} s each (sign-in ${SIGN_IN_SECONDS} s), after ${WARM_UP_SECONDS} s of warm-up (medians); sign-in concurrency ${HASH_CONCURRENCY}; HTTP connections ${HTTP_CONNECTIONS} (refresh ${REFRESH_CONNECTIONS})`,
  );

  const stored = await hashPassword(PASSWORD);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const bare = await startChild(['-e', BARE_SERVER], {}, '/');
  const raw: RawLimits = {
    hash: () => rateAsync(() => argon2Verify(stored, PASSWORD), HASH_CONCURRENCY, SIGN_IN_SECONDS),
    sign: () => rateSync(() => sign('sha256', Buffer.from('header.payload'), privateKey)),
    bare: async () => (await cannon({ url: bare.url, connections: HTTP_CONNECTIONS })).rps,
  };
  try {
    await runAll(raw);
  } finally {
    await bare.stop();
  }
}

async function runAll(raw: RawLimits): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (ONLY === undefined || !databaseUrl) {
    await httpBenchmarks({ label: 'SQLite', instanceSecret: randomBytes(48).toString('base64url'), only: ONLY }, raw);
  }
  if (ONLY === undefined) {
    const sqlite = openStore({ sqliteFile: ':memory:' });
    await migrate(sqlite);
    await verificationBenchmark(sqlite);
    await sqlite.close();
  }

  if (databaseUrl) {
    const schema = `bench_${randomBytes(4).toString('hex')}`;
    const admin = openStore({ databaseUrl, postgresSchema: schema });
    await migrate(admin, schema);
    try {
      console.log('');
      const redisUrl = process.env.REDIS_URL;
      const postgres = { databaseUrl, databaseSchema: schema, instanceSecret: randomBytes(48).toString('base64url') };
      await httpBenchmarks({ ...postgres, label: redisUrl ? 'PostgreSQL + Redis' : 'PostgreSQL', redisUrl, only: ONLY }, raw);
      if (redisUrl && ONLY !== 'refresh') {
        console.log('');
        await httpBenchmarks({ ...postgres, label: 'PostgreSQL without Redis (no session cache)', only: 'me' }, raw);
      }
      if (ONLY === undefined) await verificationBenchmark(admin);
    } finally {
      const { sql } = await import('kysely');
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
      await admin.close();
    }
  }
}
