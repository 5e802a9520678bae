import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenVerificationError, verifyToken } from '../src/index.js';
import { jwksCacheFor } from '../src/jwks.js';
import { startGatehouse } from './helpers/gatehouse.js';
import { makeKey, startIssuer, type TestIssuer } from './helpers/issuer.js';

async function reasonOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => (e instanceof TokenVerificationError ? e.reason : String(e)),
  );
}

describe('the JWKS cache: cooldown on unknown kids', () => {
  let issuer: TestIssuer;
  const first = makeKey('RS256', 'key_first');
  beforeEach(async () => {
    issuer = await startIssuer([first]);
    // Only Date is faked, so the 30 s cooldown can pass without waiting; sockets and timers are real.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
  });
  afterEach(async () => {
    vi.useRealTimers();
    await issuer.close();
  });

  it('the first load starts no cooldown: the first unknown kid after it refetches at once, the next waits 30 s', async () => {
    await verifyToken(issuer.token(), { issuer: issuer.issuer });
    expect(issuer.fetches).toBe(1);

    const second = makeKey('ES256', 'key_second');
    issuer.keys.push(second);
    await verifyToken(issuer.token({}, {}, second), { issuer: issuer.issuer });
    expect(issuer.fetches).toBe(2);

    const third = makeKey('EdDSA', 'key_third');
    issuer.keys.push(third);
    expect(await reasonOf(verifyToken(issuer.token({}, {}, third), { issuer: issuer.issuer }))).toBe('jwk-kid-mismatch');
    expect(issuer.fetches).toBe(2);

    vi.advanceTimersByTime(29_000);
    expect(await reasonOf(verifyToken(issuer.token({}, {}, third), { issuer: issuer.issuer }))).toBe('jwk-kid-mismatch');
    expect(issuer.fetches).toBe(2);

    vi.advanceTimersByTime(1_000);
    expect((await verifyToken(issuer.token({}, {}, third), { issuer: issuer.issuer })).sub).toBe('user_test');
    expect(issuer.fetches).toBe(3);
  });

  it('an unknown kid at the first load is refused; the next unknown kid may still refetch at once', async () => {
    const later = makeKey('RS256', 'key_later');
    expect(await reasonOf(verifyToken(issuer.token({}, {}, later), { issuer: issuer.issuer }))).toBe('jwk-kid-mismatch');
    expect(issuer.fetches).toBe(1);
    issuer.keys.push(later);
    await verifyToken(issuer.token({}, {}, later), { issuer: issuer.issuer });
    expect(issuer.fetches).toBe(2);
  });

  it('a failed refetch is jwks-unavailable for the new kid, and the known keys keep verifying', async () => {
    await verifyToken(issuer.token(), { issuer: issuer.issuer });
    issuer.failWith = 503;
    const next = makeKey('RS256', 'key_next');
    expect(await reasonOf(verifyToken(issuer.token({}, {}, next), { issuer: issuer.issuer }))).toBe('jwks-unavailable');
    expect((await verifyToken(issuer.token(), { issuer: issuer.issuer })).sub).toBe('user_test');
    expect(issuer.fetches).toBe(2);
  });

  it('keys are re-read in the background after an hour, without holding up verification', async () => {
    await verifyToken(issuer.token(), { issuer: issuer.issuer });
    vi.advanceTimersByTime(60 * 60_000 + 1);
    await verifyToken(issuer.token(), { issuer: issuer.issuer });
    await vi.waitFor(() => expect(issuer.fetches).toBe(2));
  });
});

describe('the JWKS cache: backoff after a failed fetch', () => {
  let issuer: TestIssuer;
  const first = makeKey('RS256', 'key_first');
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
  beforeEach(async () => {
    issuer = await startIssuer([first]);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
  });
  afterEach(async () => {
    vi.useRealTimers();
    await issuer.close();
  });

  it('a failing endpoint after the hourly re-read falls due costs one fetch per 30 s, and the cached keys keep verifying', async () => {
    await verifyToken(issuer.token(), { issuer: issuer.issuer });
    issuer.failWith = 503;
    vi.advanceTimersByTime(60 * 60_000 + 1);
    for (let i = 0; i < 50; i += 1) {
      expect((await verifyToken(issuer.token(), { issuer: issuer.issuer })).sub).toBe('user_test');
      await pause();
    }
    // The re-read the first of them started may still be on its way on a loaded machine: its failure
    // is stamped when it ends, and the 30 s below count from then.
    const cache = jwksCacheFor(`${issuer.issuer}/.well-known/jwks.json`);
    await cache.settled();
    expect([cache.fetches, issuer.fetches]).toEqual([2, 2]);

    vi.advanceTimersByTime(30_000);
    issuer.failWith = undefined;
    await verifyToken(issuer.token(), { issuer: issuer.issuer });
    await vi.waitFor(() => expect(issuer.fetches).toBe(3));
  });

  it('a flood of forged tokens naming the issuer while its first load fails costs one fetch per 30 s', async () => {
    issuer.failWith = 503;
    const forged = makeKey('RS256', 'key_forged');
    for (let i = 0; i < 20; i += 1) {
      expect(await reasonOf(verifyToken(issuer.token({}, {}, forged), { issuer: issuer.issuer }))).toBe('jwks-unavailable');
    }
    expect(issuer.fetches).toBe(1);

    vi.advanceTimersByTime(29_000);
    expect(await reasonOf(verifyToken(issuer.token(), { issuer: issuer.issuer }))).toBe('jwks-unavailable');
    expect(issuer.fetches).toBe(1);

    vi.advanceTimersByTime(1_000);
    issuer.failWith = undefined;
    expect((await verifyToken(issuer.token(), { issuer: issuer.issuer })).sub).toBe('user_test');
    expect(issuer.fetches).toBe(2);
  });
});

describe('the JWKS cache: concurrent verifications share one fetch', () => {
  it('on the first load and on a rotation, against a running Gatehouse', async () => {
    const gh = await startGatehouse();
    try {
      const environment = gh.development;
      const users = await Promise.all([gh.signUp(), gh.signUp(), gh.signUp()]);
      const all = await Promise.all(
        Array.from({ length: 60 }, (_, i) => verifyToken(users[i % 3]!.accessToken, { issuer: environment.issuer })),
      );
      expect(all.map((c) => c.sub)).toContain(users[2]!.userId);
      expect(gh.jwksFetches(environment)).toBe(1);

      await gh.rotateKeys(environment);
      const rotated = await gh.signUp();
      await Promise.all(Array.from({ length: 60 }, () => verifyToken(rotated.accessToken, { issuer: environment.issuer })));
      expect(gh.jwksFetches(environment)).toBe(2);
    } finally {
      await gh.close();
    }
  });

  it('many waiting on a JWKS that does not answer all get jwks-unavailable from one fetch', async () => {
    const issuer = await startIssuer([makeKey('RS256')]);
    try {
      issuer.hang = true;
      const reasons = await Promise.all(
        Array.from({ length: 20 }, () => reasonOf(verifyToken(issuer.token(), { issuer: issuer.issuer, jwksTimeoutMs: 200 }))),
      );
      expect(new Set(reasons)).toEqual(new Set(['jwks-unavailable']));
      expect(issuer.fetches).toBe(1);
    } finally {
      await issuer.close();
    }
  });
});
