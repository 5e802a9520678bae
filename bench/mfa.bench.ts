/**
 * Second-factor benchmarks (docs/mfa.md), on the built server (SQLite), each figure next to the one
 * it should be read against, measured in the same run with the same client and concurrency:
 *   - TOTP sign-in (password, then the code: both steps) /s   vs password sign-in /s
 *   - the second step alone (POST /v1/auth/signin/second-factor) /s   vs refresh /s
 * A TOTP code works once per user and 30-second step (three steps with the drift), so each sign-in
 * takes a slot (user, step) from a pool of users made beforehand; a round ends early when the pool
 * runs out (`BENCH_MFA_USERS`, default 200).
 */
import { randomBytes } from 'node:crypto';
import { base32Decode, base32Encode, hotp, timeStep } from '../packages/server/src/mfa/totp.js';
import { benchEnvironment, json, PASSWORD, startBenchServer } from './lib/gatehouse.js';

const SECONDS = Number(process.env.BENCH_SIGN_IN_SECONDS ?? process.env.BENCH_SECONDS ?? 4);
const USERS = Number(process.env.BENCH_MFA_USERS ?? 200);
/** As identity.bench.ts's sign-in: the libuv pool, where argon2 runs. */
const CONCURRENCY = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
const SECRET = base32Encode(Buffer.from('the bench totp secret'));

interface Slot {
  email: string;
  offset: number;
}

/** Runs `op` with CONCURRENCY in flight until time is up or `op` says the pool is empty; answers ops/s (successes only) and failures. */
async function rate(op: () => Promise<boolean | 'empty'>, seconds = SECONDS): Promise<{ rps: number; failed: number }> {
  const start = performance.now();
  const end = start + seconds * 1000;
  let ok = 0;
  let failed = 0;
  let empty = false;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (!empty && performance.now() < end) {
        const result = await op();
        if (result === 'empty') empty = true;
        else if (result) ok++;
        else failed++;
      }
    }),
  );
  return { rps: ok / ((performance.now() - start) / 1000), failed };
}

function post(url: string, key: string, body: unknown) {
  return fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const code = (offset: number) => hotp(base32Decode(SECRET)!, timeStep(Date.now()) + offset);
const line = (label: string, value: { rps: number; failed: number }, against: string, other: { rps: number; failed: number }) =>
  console.log(
    `  ${label.padEnd(40)} ${value.rps.toFixed(0).padStart(6)}/s   ${against.padEnd(28)} ${other.rps.toFixed(0).padStart(6)}/s   ratio ${(value.rps / other.rps).toFixed(2)}` +
      (value.failed + other.failed > 0 ? `   (${value.failed + other.failed} refused: a 30 s step turned)` : ''),
  );

export async function run(): Promise<void> {
  const bench = await startBenchServer();
  try {
    const env = await benchEnvironment(bench, 'production');
    const url = bench.server.url;
    const pk = env.publishableKey;
    // Users with TOTP (an imported secret); one without, for the password sign-in.
    const emails: string[] = [];
    const make = async (totp: boolean) => {
      const email = `mfa-${randomBytes(5).toString('hex')}@example.test`;
      await json(`${url}/v1/users`, {
        method: 'POST',
        token: env.secretKey,
        body: { email, password: PASSWORD, ...(totp ? { totpSecret: SECRET } : {}) },
      });
      return email;
    };
    const plain = await make(false);
    for (let i = 0; i < USERS; i += CONCURRENCY)
      emails.push(...(await Promise.all(Array.from({ length: Math.min(CONCURRENCY, USERS - i) }, () => make(true)))));
    // Each user's steps in order (a code is accepted only for a step later than the last one used).
    const slots: Slot[] = [-1, 0, 1].flatMap((offset) => emails.map((email) => ({ email, offset })));

    const password = await rate(async () => (await post(`${url}/v1/auth/signin`, pk, { email: plain, password: PASSWORD })).status === 200);

    // Half the pool for whole TOTP sign-ins, half for attempts made beforehand (the second step alone).
    const whole = slots.filter((_, i) => i % 2 === 0);
    const later = slots.filter((_, i) => i % 2 === 1);
    const totp = await rate(async () => {
      const slot = whole.shift();
      if (!slot) return 'empty';
      const first = await post(`${url}/v1/auth/signin`, pk, { email: slot.email, password: PASSWORD });
      if (first.status !== 202) return false;
      const { attemptId } = (await first.json()) as { attemptId: string };
      return (await post(`${url}/v1/auth/signin/second-factor`, pk, { attemptId, factor: 'totp', code: code(slot.offset) })).status === 200;
    });

    const attempts: { attemptId: string; offset: number }[] = [];
    for (const slot of later) {
      const first = await post(`${url}/v1/auth/signin`, pk, { email: slot.email, password: PASSWORD });
      if (first.status === 202)
        attempts.push({ attemptId: ((await first.json()) as { attemptId: string }).attemptId, offset: slot.offset });
    }
    const refreshTokens: string[] = [];
    const second = await rate(async () => {
      const attempt = attempts.shift();
      if (!attempt) return 'empty';
      const done = await post(`${url}/v1/auth/signin/second-factor`, pk, {
        attemptId: attempt.attemptId,
        factor: 'totp',
        code: code(attempt.offset),
      });
      if (done.status !== 200) return false;
      refreshTokens.push(((await done.json()) as { session: { refreshToken: string } }).session.refreshToken);
      return true;
    });
    // Refreshes rotate the sessions the second step made: each answer's successor goes back in the pool.
    const refresh = await rate(async () => {
      const token = refreshTokens.shift();
      if (!token) return 'empty';
      const answer = await post(`${url}/v1/auth/refresh`, pk, { refreshToken: token });
      if (answer.status !== 200) return false;
      refreshTokens.push(((await answer.json()) as { session: { refreshToken: string } }).session.refreshToken);
      return true;
    });

    console.log(`  -- SQLite, ${CONCURRENCY} clients at once, ${USERS} users with TOTP`);
    line('TOTP sign-in (both steps)', totp, 'password sign-in', password);
    line('second step alone (second-factor)', second, 'refresh', refresh);
  } finally {
    await bench.stop();
  }
}
