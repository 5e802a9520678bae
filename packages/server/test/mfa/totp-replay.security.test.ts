import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { enableTotp, reverify, totpCode } from '../helpers/mfa.js';
import { signUp } from '../helpers/identity.js';
import { openSharedTestStores } from '../helpers/store.js';

const clock = testClock(1_840_000_000_020);
const STEP = 30_000;

describe('a TOTP code is accepted once (RFC 6238 §5.2)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  it('a replayed code is refused, and so is the code of an earlier step still within the drift', async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken, clock.now);
    // Enrolment spent the current step: its code, presented again, is a replay.
    const enrolled = await reverify(t, user.accessToken, { code: totpCode(secret, clock.now()) });
    expect(enrolled.statusCode).toBe(401);
    expect(json(enrolled).error.code).toBe('invalid_credentials');

    clock.advance(STEP);
    const code = totpCode(secret, clock.now());
    expect((await reverify(t, user.accessToken, { code })).statusCode).toBe(200);
    expect((await reverify(t, user.accessToken, { code })).statusCode).toBe(401);
    // The next step's code (one step of drift) is accepted; then the current one is too old.
    const next = totpCode(secret, clock.now(), 1);
    expect((await reverify(t, user.accessToken, { code: next })).statusCode).toBe(200);
    clock.advance(STEP);
    expect((await reverify(t, user.accessToken, { code: totpCode(secret, clock.now(), -1) })).statusCode).toBe(401);
  });

  it('one step raced by several requests at once: exactly one wins', async () => {
    const user = await signUp(t);
    const { secret } = await enableTotp(t, user.accessToken, clock.now);
    // Three rounds: the losers count as wrong codes, and nine stay under the throttle's ten.
    for (let round = 0; round < 3; round++) {
      clock.advance(STEP);
      const code = totpCode(secret, clock.now());
      const answers = await Promise.all(Array.from({ length: 4 }, () => reverify(t, user.accessToken, { code })));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401, 401, 401]);
    }
  });

  it('one step raced across two app instances on one database: exactly one wins', async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    const shared = { now: clock.now, platformKey: t.platformKey, instanceSecret: t.instanceSecret };
    const a = await startTestApp({ ...shared, store: storeA! });
    const b = await startTestApp({ ...shared, store: storeB! });
    try {
      const environment = a.project.development;
      const user = await signUp(a, { environment });
      const { secret } = await enableTotp(a, user.accessToken, clock.now);
      for (let round = 0; round < 3; round++) {
        clock.advance(STEP);
        const code = totpCode(secret, clock.now());
        const answers = await Promise.all([a, b, a, b].map((node) => reverify(node, user.accessToken, { code })));
        expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
      }
    } finally {
      await b.close();
      await a.close();
    }
  });
});
