import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL_CODE_ACCOUNT, EMAIL_CODE_CLIENT, PASSWORD_ACCOUNT, PASSWORD_CLIENT, RESET_CLIENT } from '../../src/ratelimit/throttle-policies.js';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, signUp, uniqueEmail } from '../helpers/identity.js';
import { deletePrefix, hasRedisServer, PrivateRedis, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { openSharedTestStores } from '../helpers/store.js';

const WRONG = 'not the password at all';

/** Requests come from `client` (the socket's peer, as light-my-request sets it). */
function from(t: TestApp, client: string) {
  const pk = t.project.development.publishableKey;
  const post = (url: string, payload: object) => t.call({ method: 'POST', url, credential: pk, payload, remoteAddress: client });
  return {
    signIn: (email: string, password: string) => post('/v1/auth/signin', { email, password }),
    verifyCode: (email: string, code: string) => post('/v1/auth/email-code/verify', { email, code }),
    verifyLink: (token: string) => post('/v1/auth/magic-link/verify', { token }),
    completeReset: (token: string, newPassword = 'a brand new passphrase') =>
      post('/v1/auth/password-reset/complete', { token, newPassword }),
  };
}

function expectLocked(res: LightMyRequestResponse, maxSeconds: number): number {
  expect(res.statusCode).toBe(429);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe('rate_limited');
  expect(body.error.message).toMatch(/wait \d+ seconds/);
  const seconds = Number(res.headers['retry-after']);
  expect(Number.isInteger(seconds) && seconds >= 1 && seconds <= maxSeconds).toBe(true);
  expect(body.error.message).toContain(`wait ${seconds} seconds`);
  return seconds;
}

async function failPasswords(t: TestApp, client: string, email: string, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await from(t, client).signIn(email, WRONG)).statusCode);
  return statuses;
}

const modes = [
  { name: 'memory', redis: false },
  { name: REDIS_URL ? 'Redis' : 'Redis (skipped: REDIS_URL unset)', redis: true },
] as const;

describe.each(modes)('sign-in throttling, counters in $name', ({ redis }) => {
  const skip = redis && !REDIS_URL;
  const prefix = testPrefix();
  const clock = testClock();
  let t: TestApp;

  beforeAll(async () => {
    if (skip) return;
    t = await startTestApp({
      throttle: { clock: clock.now, redisUsesClock: true },
      ...(redis ? { redis: { url: REDIS_URL!, prefix } } : {}),
    });
  });
  afterAll(async () => {
    await t?.close();
    if (redis && REDIS_URL) {
      const r = new Redis(REDIS_URL);
      await deletePrefix(r, prefix);
      await r.quit();
    }
  });

  it.skipIf(skip)('password guessing: 30 wrong passwords for one account, then the right one, is refused with 429 until the lock runs out', async () => {
    const user = await signUp(t);
    const statuses = await failPasswords(t, '192.0.2.10', user.email, 30);
    expect(statuses.slice(0, PASSWORD_ACCOUNT.free)).toEqual(Array(PASSWORD_ACCOUNT.free).fill(401));
    expect(new Set(statuses.slice(PASSWORD_ACCOUNT.free))).toEqual(new Set([429]));

    // The right password, from another network, is refused too: the lock is the account's.
    const locked = await from(t, '192.0.2.11').signIn(user.email, GOOD_PASSWORD);
    const seconds = expectLocked(locked, PASSWORD_ACCOUNT.baseLockMs / 1000);
    expect(seconds).toBe(PASSWORD_ACCOUNT.baseLockMs / 1000);

    // Retry-After is what the lock needs: a moment before it ends, still locked for one second.
    clock.advance(seconds * 1000 - 500);
    expect(expectLocked(await from(t, '192.0.2.11').signIn(user.email, GOOD_PASSWORD), 1)).toBe(1);
    clock.advance(500);
    expect((await from(t, '192.0.2.11').signIn(user.email, GOOD_PASSWORD)).statusCode).toBe(200);
    // A success clears the account's record.
    expect((await failPasswords(t, '192.0.2.11', user.email, PASSWORD_ACCOUNT.free - 1)).every((s) => s === 401)).toBe(true);
  });

  it.skipIf(skip)('password guessing: each further failure after a lock doubles the next lock', async () => {
    const user = await signUp(t);
    await failPasswords(t, '192.0.2.20', user.email, PASSWORD_ACCOUNT.free);
    const first = expectLocked(await from(t, '192.0.2.20').signIn(user.email, WRONG), 60);
    clock.advance(first * 1000);
    expect((await from(t, '192.0.2.20').signIn(user.email, WRONG)).statusCode).toBe(401);
    const second = expectLocked(await from(t, '192.0.2.20').signIn(user.email, WRONG), 120);
    expect(second).toBe(2 * first);
    clock.advance(second * 1000);
  });

  it.skipIf(skip)('parallel password guessing: a burst of guesses gets no more tries than the allowance', async () => {
    const user = await signUp(t);
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => from(t, `192.0.2.${100 + (i % 50)}`).signIn(user.email, WRONG)),
    );
    const statuses = burst.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(PASSWORD_ACCOUNT.free);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - PASSWORD_ACCOUNT.free);
  });

  it.skipIf(skip)('account enumeration: a locked unknown address answers exactly like a locked known one', async () => {
    const known = await signUp(t);
    const unknown = uniqueEmail('nobody');
    const answers: LightMyRequestResponse[][] = [];
    for (const [email, client] of [
      [known.email, '192.0.2.30'],
      [unknown, '192.0.2.31'],
    ] as const) {
      const seen: LightMyRequestResponse[] = [];
      for (let i = 0; i <= PASSWORD_ACCOUNT.free; i++) seen.push(await from(t, client).signIn(email, WRONG));
      answers.push(seen);
    }
    const [a, b] = answers as [LightMyRequestResponse[], LightMyRequestResponse[]];
    const shape = (r: LightMyRequestResponse) => ({
      status: r.statusCode,
      body: r.body,
      headers: Object.keys(r.headers).sort(),
      retryAfter: r.headers['retry-after'],
    });
    expect(a.map(shape)).toEqual(b.map(shape));
    expect(a.at(-1)!.statusCode).toBe(429);
  });

  it.skipIf(skip)('account enumeration: the per-account counter compares the address case-insensitively', async () => {
    const user = await signUp(t);
    const shouting = user.email.toUpperCase();
    await failPasswords(t, '192.0.2.35', shouting, PASSWORD_ACCOUNT.free);
    expectLocked(await from(t, '192.0.2.36').signIn(user.email, GOOD_PASSWORD), 60);
  });

  it.skipIf(skip)('credential stuffing: one client address trying many accounts is locked, other clients are not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < PASSWORD_CLIENT.free + 1; i++) {
      statuses.push((await from(t, '198.51.100.7').signIn(uniqueEmail('stuffed'), WRONG)).statusCode);
    }
    expect(statuses.slice(0, PASSWORD_CLIENT.free).every((s) => s === 401)).toBe(true);
    expectLocked((await from(t, '198.51.100.7').signIn(uniqueEmail('stuffed'), WRONG)) as LightMyRequestResponse, 60);
    expect((await from(t, '198.51.100.8').signIn(uniqueEmail('other'), WRONG)).statusCode).toBe(401);
    // One IPv6 subscriber's /64 is one client, whichever address in it is used.
    for (let i = 0; i < PASSWORD_CLIENT.free; i++) await from(t, `2001:db8:7:7::${(i + 1).toString(16)}`).signIn(uniqueEmail('v6'), WRONG);
    expectLocked(await from(t, '2001:db8:7:7:ffff::1').signIn(uniqueEmail('v6'), WRONG), 60);
    clock.advance(PASSWORD_CLIENT.maxLockMs);
  });

  it.skipIf(skip)('a right password is given back to its client address: it never starts that address\'s lock', async () => {
    const user = await signUp(t);
    for (let i = 0; i < PASSWORD_CLIENT.free - 1; i++) await from(t, '198.51.100.50').signIn(uniqueEmail('near'), WRONG);
    expect((await from(t, '198.51.100.50').signIn(user.email, GOOD_PASSWORD)).statusCode).toBe(200);
    expect((await from(t, '198.51.100.50').signIn(uniqueEmail('near'), WRONG)).statusCode).toBe(401);
    clock.advance(PASSWORD_CLIENT.maxLockMs);
  });

  it.skipIf(skip)('lockout attack: wrong passwords for the victim do not block their magic link or email code', async () => {
    const victim = await signUp(t);
    await failPasswords(t, '203.0.113.66', victim.email, 30);
    expectLocked(await from(t, '203.0.113.66').signIn(victim.email, GOOD_PASSWORD), 60 * 15);

    expect((await start(t, 'magic-link', { email: victim.email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const link = tokenFrom((await outbox(t, victim.email))[0]!);
    expect((await from(t, '198.51.100.77').verifyLink(link)).statusCode).toBe(200);

    expect((await start(t, 'email-code', { email: victim.email })).statusCode).toBe(202);
    const code = codeFrom((await outbox(t, victim.email))[0]!);
    expect((await from(t, '198.51.100.77').verifyCode(victim.email, code)).statusCode).toBe(200);
  });

  it.skipIf(skip)('lockout attack: wrong codes from many addresses cannot keep the victim from signing in with a fresh code', async () => {
    const victim = await signUp(t);
    expect((await start(t, 'email-code', { email: victim.email })).statusCode).toBe(202);
    // A botnet: every guess from a different client address, so only the per-account counter sees them all.
    for (let i = 0; i < 60; i++) {
      const res = await from(t, `10.66.${i >> 8}.${i & 255}`).verifyCode(victim.email, String(100000 + i));
      expect(res.statusCode).toBe(401);
    }
    expect((await start(t, 'email-code', { email: victim.email })).statusCode).toBe(202);
    const code = codeFrom((await outbox(t, victim.email))[0]!);
    expect((await from(t, '198.51.100.78').verifyCode(victim.email, code)).statusCode).toBe(200);
  });

  it.skipIf(skip)('code brute force across client addresses: past the allowance each code takes one try', async () => {
    const email = uniqueEmail('target');
    await start(t, 'email-code', { email });
    for (let i = 0; i < EMAIL_CODE_ACCOUNT.free; i++) await from(t, `10.77.0.${i}`).verifyCode(email, '000000');
    await start(t, 'email-code', { email });
    const code = codeFrom((await outbox(t, email))[0]!);
    const wrong = code === '999999' ? '999998' : '999999';
    const guess = await from(t, '10.77.1.1').verifyCode(email, wrong);
    expect(guess.statusCode).toBe(401);
    expect(guess.json().error.message).toMatch(/now void/);
    // The one try is spent: even the right code no longer works.
    expect((await from(t, '10.77.1.2').verifyCode(email, code)).statusCode).toBe(401);
  });

  it.skipIf(skip)('code brute force from one client address is locked, and the lock names a way out', async () => {
    const email = uniqueEmail('coded');
    for (let i = 0; i < EMAIL_CODE_CLIENT.free; i++) {
      expect((await from(t, '198.51.100.90').verifyCode(email, '123456')).statusCode).toBe(401);
    }
    const locked = await from(t, '198.51.100.90').verifyCode(email, '123456');
    expectLocked(locked, 60);
    expect(locked.json().error.message).toMatch(/magic link/);
    // Another client address verifying a real code for that same address is not affected.
    await start(t, 'email-code', { email });
    const code = codeFrom((await outbox(t, email))[0]!);
    expect((await from(t, '198.51.100.91').verifyCode(email, code)).statusCode).toBe(200);
  });

  it.skipIf(skip)('reset token scanning from one client address is locked; a completed reset lifts the password lock', async () => {
    for (let i = 0; i < RESET_CLIENT.free; i++) {
      expect((await from(t, '198.51.100.120').completeReset(`guess-${i}`)).statusCode).toBe(401);
    }
    expectLocked(await from(t, '198.51.100.120').completeReset('guess-final'), 60);

    const user = await signUp(t);
    await failPasswords(t, '203.0.113.120', user.email, PASSWORD_ACCOUNT.free);
    expectLocked(await from(t, '203.0.113.121').signIn(user.email, GOOD_PASSWORD), 60);
    await start(t, 'password-reset', { email: user.email, redirectUrl: REDIRECT });
    const token = tokenFrom((await outbox(t, user.email))[0]!);
    expect((await from(t, '198.51.100.121').completeReset(token, 'my new long passphrase')).statusCode).toBe(200);
    expect((await from(t, '203.0.113.121').signIn(user.email, 'my new long passphrase')).statusCode).toBe(200);
  });
});

describe('the counted client address', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** A real HTTP server on loopback; every request's peer is 127.0.0.1. */
  async function listen(trustProxy: string[] | undefined) {
    t = await startTestApp({ trustProxy });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const pk = t.project.development.publishableKey;
    return (forwardedFor: string) =>
      fetch(`http://127.0.0.1:${port}/v1/auth/signin`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pk}`, 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
        body: JSON.stringify({ email: uniqueEmail('xff'), password: WRONG }),
      });
  }

  it('spoofed X-Forwarded-For from an untrusted peer does not change the counted address', async () => {
    const signIn = await listen(undefined);
    for (let i = 0; i < PASSWORD_CLIENT.free; i++) expect((await signIn(`203.0.113.${i}`)).status).toBe(401);
    // Every request counted against the socket's peer, so a fresh spoofed address is still locked.
    const res = await signIn('203.0.113.200');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a trusted proxy names the client: its X-Forwarded-For is the counted address', async () => {
    const signIn = await listen(['127.0.0.1']);
    for (let i = 0; i < PASSWORD_CLIENT.free; i++) expect((await signIn(`203.0.113.${i}`)).status).toBe(401);
    expect((await signIn('203.0.113.200')).status).toBe(401);
    for (let i = 0; i < PASSWORD_CLIENT.free; i++) await signIn('198.51.100.1');
    expect((await signIn('198.51.100.1')).status).toBe(429);
    expect((await signIn('198.51.100.2')).status).toBe(401);
  });

  it('only the named proxies count: a peer outside TRUST_PROXY is the client itself', async () => {
    const signIn = await listen(['10.0.0.0/8']);
    for (let i = 0; i < PASSWORD_CLIENT.free; i++) await signIn(`203.0.113.${i}`);
    expect((await signIn('203.0.113.200')).status).toBe(429);
  });
});

describe(`several nodes share the counters ${REDIS_URL ? '(Redis)' : '(skipped: REDIS_URL unset)'}`, () => {
  it.skipIf(!REDIS_URL)('failures on one node lock the account on the other', async () => {
    const prefix = testPrefix();
    const [storeA, storeB] = await openSharedTestStores(2);
    const a = await startTestApp({ store: storeA!, instanceSecret: 'x'.repeat(48), redis: { url: REDIS_URL!, prefix } });
    const b = await startTestApp({ store: storeB!, instanceSecret: 'x'.repeat(48), redis: { url: REDIS_URL!, prefix } });
    try {
      const user = await signUp(a);
      const pk = a.project.development.publishableKey;
      const signInOn = (node: TestApp, client: string, password: string) =>
        node.call({ method: 'POST', url: '/v1/auth/signin', credential: pk, payload: { email: user.email, password }, remoteAddress: client });
      for (let i = 0; i < PASSWORD_ACCOUNT.free; i++) {
        expect((await signInOn(i % 2 ? a : b, '192.0.2.1', WRONG)).statusCode).toBe(401);
      }
      expect((await signInOn(b, '192.0.2.2', GOOD_PASSWORD)).statusCode).toBe(429);
      expect((await signInOn(a, '192.0.2.2', GOOD_PASSWORD)).statusCode).toBe(429);
    } finally {
      await b.close();
      await a.close();
      const r = new Redis(REDIS_URL!);
      await deletePrefix(r, prefix);
      await r.quit();
    }
  });
});

const privateRedis = hasRedisServer();

describe.skipIf(!privateRedis)(`when Redis fails ${privateRedis ? '(private redis-server)' : '(skipped: no redis-server binary)'}`, () => {
  it('sign-in stays throttled, per node, and never fails with a 5xx', async () => {
    const redis = await PrivateRedis.start();
    const t = await startTestApp({ redis: { url: redis.url, prefix: testPrefix(), commandTimeoutMs: 500 } });
    try {
      const user = await signUp(t);
      await failPasswords(t, '192.0.2.50', user.email, 2);
      await redis.kill();
      const statuses = await failPasswords(t, '192.0.2.50', user.email, PASSWORD_ACCOUNT.free + 2);
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await t.close();
      await redis.kill();
    }
  });
});
