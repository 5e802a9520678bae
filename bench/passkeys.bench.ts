/**
 * Passkey sign-in next to password sign-in and refresh, on the built server (SQLite):
 *   - passkey sign-in/s   POST /v1/auth/passkey/options, the assertion signed (ES256, by the load
 *                         generator's software authenticator), POST /v1/auth/passkey/verify
 *   - password sign-in/s  POST /v1/auth/signin (argon2id)
 *   - refresh/s           POST /v1/auth/refresh, each client rotating its own token
 * Each at the same concurrency, in fetch loops of the same shape, alternating ROUNDS times; the
 * medians are printed. The passkey is a synced one (counter 0), as most are: concurrent sign-ins
 * of one credential do not race on its counter. The load generator's ES256 signing shares the cores.
 */
import { SoftAuthenticator } from '../packages/server/test/helpers/webauthn.js';
import { benchEnvironment, json, PASSWORD, startBenchServer } from './lib/gatehouse.js';
import { loadLine } from './lib/machine.js';
import { median } from './lib/median.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 2);
/**
 * Operations each path runs before any round counts, however long they take. V8 optimizes a path
 * after it has run often enough, not after a time: at 2 s alone the passkey path (about 500/s here)
 * was measured half-optimized, its rate still climbing by a sixth, while refreshes (twice as many)
 * were done (docs/performance.md, 2026-11-29 15:30).
 */
const WARM_UP_OPERATIONS = Number(process.env.BENCH_WARM_UP_OPERATIONS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_PASSKEY_CONNECTIONS ?? process.env.UV_THREADPOOL_SIZE ?? 4);
const ORIGIN = 'http://localhost:3000';

async function post(url: string, token: string, body: unknown): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: ORIGIN },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** Operations per second of `op`, `CONCURRENCY` in flight, for `seconds` and at least `operations` operations. */
async function rate(op: (worker: number) => Promise<unknown>, seconds = SECONDS, operations = 0): Promise<number> {
  const start = performance.now();
  const end = start + seconds * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (performance.now() < end || count < operations) {
        await op(worker);
        count++;
      }
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

export async function run(): Promise<void> {
  const bench = await startBenchServer();
  try {
    const url = bench.server.url;
    const environment = await benchEnvironment(bench, 'development');
    await json(`${url}/v1/platform/environments/${environment.id}`, {
      method: 'PATCH',
      token: bench.platformKey,
      body: { authMethods: { passkey: true } },
    });
    const pk = environment.publishableKey;
    const email = `bench-passkey-${Date.now()}@example.test`;
    const signedUp = await post(`${url}/v1/auth/signup`, pk, { email, password: PASSWORD });
    const authenticator = new SoftAuthenticator(ORIGIN, 'ES256', false);
    const { options } = await post(`${url}/v1/me/passkeys/registration`, signedUp.session.accessToken, {});
    await post(`${url}/v1/me/passkeys`, signedUp.session.accessToken, { response: authenticator.create(options) });

    const passkeySignIn = async () => {
      const started = await post(`${url}/v1/auth/passkey/options`, pk, {});
      await post(`${url}/v1/auth/passkey/verify`, pk, { attemptId: started.attemptId, response: authenticator.get(started.options) });
    };
    // A user with a passkey has a second factor: password sign-ins are measured for another user, without one.
    const passwordEmail = `bench-password-${Date.now()}@example.test`;
    await post(`${url}/v1/auth/signup`, pk, { email: passwordEmail, password: PASSWORD });
    const passwordSignIn = () => post(`${url}/v1/auth/signin`, pk, { email: passwordEmail, password: PASSWORD });
    const tokens: string[] = [];
    for (let i = 0; i < CONCURRENCY; i++) tokens.push((await passwordSignIn()).session.refreshToken);
    const refresh = async (worker: number) => {
      tokens[worker] = (await post(`${url}/v1/auth/refresh`, pk, { refreshToken: tokens[worker] })).session.refreshToken;
    };

    // A server that has just started runs its first requests in the interpreter (as identity.bench.ts says):
    // each path is warmed up before any round counts.
    await passkeySignIn();
    for (const op of [passkeySignIn, refresh]) await rate(op, WARM_UP_SECONDS, WARM_UP_OPERATIONS);
    const results = { passkey: [] as number[], password: [] as number[], refresh: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      console.log(`  round ${round + 1} (${loadLine()})`);
      results.passkey.push(await rate(passkeySignIn));
      results.password.push(await rate(passwordSignIn));
      results.refresh.push(await rate(refresh));
    }
    const passkey = median(results.passkey);
    const password = median(results.password);
    const rotation = median(results.refresh);
    console.log(
      `  ${CONCURRENCY} in flight, medians of ${ROUNDS} rounds of ${SECONDS} s after a warm-up of ${WARM_UP_OPERATIONS} operations (at least ${WARM_UP_SECONDS} s) per path, SQLite:`,
    );
    console.log(`  passkey sign-in   ${passkey.toFixed(0).padStart(6)}/s  (options + verify; ${(passkey / password).toFixed(2)}× password sign-in)`);
    console.log(`  password sign-in  ${password.toFixed(0).padStart(6)}/s`);
    console.log(`  refresh           ${rotation.toFixed(0).padStart(6)}/s  (passkey sign-in ÷ refresh ${(passkey / rotation).toFixed(2)}; goal ≥ 0.5)`);
  } finally {
    await bench.stop();
  }
}
