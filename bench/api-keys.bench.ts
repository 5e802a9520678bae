/**
 * API keys and machines. Each figure is printed as a ratio against its limit measured in the same run:
 *   - POST /v1/api-keys/verify req/s          vs GET /v1/me req/s (goal: at least 0.5)
 *   - verifyApiKey/s with its cache (in process) vs verifyApiKey/s without (one request each)
 *   - POST /v1/oauth/token req/s               vs raw RS256 signatures/s (1 core; the server signs
 *     RS256 on a thread of its own, so it may exceed 1)
 * The built server runs as a child process on SQLite, and on PostgreSQL (+ Redis when REDIS_URL is
 * set) when DATABASE_URL is set. The two sides of each pair alternate, ROUNDS times; medians.
 */
import autocannon from 'autocannon';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { verifyApiKey } from '../packages/backend/src/index.js';
import { migrate, openStore } from '../packages/server/src/db/index.js';
import { benchEnvironment, json, PASSWORD, startBenchServer, type GatehouseOptions } from './lib/gatehouse.js';
import { loadLine } from './lib/machine.js';
import { median } from './lib/median.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

interface Measured {
  rps: number;
  non2xx: number;
  errors: number;
}

async function cannon(options: autocannon.Options): Promise<Measured> {
  const result = await autocannon({ connections: CONNECTIONS, ...options, duration: options.duration ?? SECONDS });
  return { rps: result.requests.average, non2xx: result.non2xx, errors: result.errors };
}

async function rateAsync(op: () => Promise<unknown>, concurrency: number, seconds = SECONDS): Promise<number> {
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let count = 0;
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
    for (let i = 0; i < 20; i++) op();
    count += 20;
  }
  return count / ((performance.now() - start) / 1000);
}

const fmt = (n: number) => n.toFixed(0).padStart(7);

/** Alternates the limit and the measured side ROUNDS times; prints medians and the median ratio. */
async function paired(label: string, baseLabel: string, base: () => Promise<number> | number, measured: () => Promise<Measured>) {
  const bases: number[] = [];
  const values: number[] = [];
  const ratios: string[] = [];
  let non2xx = 0;
  let errors = 0;
  const ratioValues: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const load = loadLine().replace('load ', '');
    const b = await base();
    const m = await measured();
    bases.push(b);
    values.push(m.rps);
    ratioValues.push(m.rps / b);
    ratios.push(`${(m.rps / b).toFixed(2)} at load ${load}`);
    non2xx += m.non2xx;
    errors += m.errors;
  }
  const problems = non2xx || errors ? `   (non-2xx ${non2xx}, errors ${errors})` : '';
  console.log(
    `  ${label.padEnd(36)} ${fmt(median(values))}/s   ${baseLabel.padEnd(34)} ${fmt(median(bases))}/s   ratio ${median(ratioValues).toFixed(2)}   (rounds ${ratios.join(', ')})${problems}`,
  );
}

async function deployment(label: string, options: Partial<GatehouseOptions>) {
  const bench = await startBenchServer(options);
  try {
    const url = bench.server.url;
    const environment = await benchEnvironment(bench, 'production');
    const signedUp = await json(`${url}/v1/auth/signup`, {
      method: 'POST',
      token: environment.publishableKey,
      body: { email: `keys-${randomBytes(4).toString('hex')}@example.test`, password: PASSWORD },
    });
    const accessToken = signedUp.session.accessToken as string;
    const { secret } = await json(`${url}/v1/api-keys`, {
      method: 'POST',
      token: environment.secretKey,
      body: { subject: signedUp.user.id, name: 'bench', scopes: ['reports:read'] },
    });
    const machine = await json(`${url}/v1/machines`, {
      method: 'POST',
      token: environment.secretKey,
      body: { name: 'bench', scopes: ['reports:read'] },
    });

    const me: autocannon.Options = { url: `${url}/v1/me`, headers: { authorization: `Bearer ${accessToken}` } };
    const verify: autocannon.Options = {
      url: `${url}/v1/api-keys/verify`,
      method: 'POST',
      headers: { authorization: `Bearer ${environment.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ secret }),
    };
    const token: autocannon.Options = {
      url: `${url}/v1/oauth/token`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: machine.machine.id,
        client_secret: machine.clientSecret,
      }).toString(),
    };
    for (const options of [me, verify, token]) await cannon({ ...options, duration: WARM_UP_SECONDS });

    console.log(`  -- ${label}`);
    await paired(
      'POST /v1/api-keys/verify',
      'GET /v1/me',
      async () => (await cannon(me)).rps,
      () => cannon(verify),
    );

    const sdk = { secretKey: environment.secretKey, baseUrl: url };
    await verifyApiKey(secret, sdk);
    await paired(
      `verifyApiKey, cached (c=${CONNECTIONS})`,
      `verifyApiKey, cacheTtlMs 0 (c=${CONNECTIONS})`,
      () => rateAsync(() => verifyApiKey(secret, { ...sdk, cacheTtlMs: 0 }), CONNECTIONS),
      async () => ({ rps: await rateAsync(() => verifyApiKey(secret, sdk), CONNECTIONS), non2xx: 0, errors: 0 }),
    );

    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const data = Buffer.from('header.payload');
    await paired(
      'POST /v1/oauth/token (RS256)',
      'raw RS256 sign (1 core)',
      () => rateSync(() => sign('sha256', data, privateKey)),
      () => cannon(token),
    );
  } finally {
    await bench.stop();
  }
}

export async function run(): Promise<void> {
  console.log(
    `  ${ROUNDS} alternating rounds per pair, ${SECONDS} s each, after ${WARM_UP_SECONDS} s of warm-up (medians); ${CONNECTIONS} connections`,
  );
  await deployment('SQLite', {});
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return;
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = openStore({ databaseUrl, postgresSchema: schema });
  await migrate(admin, schema);
  try {
    console.log('');
    const redisUrl = process.env.REDIS_URL;
    await deployment(redisUrl ? 'PostgreSQL + Redis' : 'PostgreSQL', {
      databaseUrl,
      databaseSchema: schema,
      redisUrl,
      instanceSecret: randomBytes(48).toString('base64url'),
    });
  } finally {
    const { sql } = await import('kysely');
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.close();
  }
}
