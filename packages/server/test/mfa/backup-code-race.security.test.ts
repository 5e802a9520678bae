import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall, reverify } from '../helpers/mfa.js';
import { openSharedTestStores } from '../helpers/store.js';

describe('a backup code is spent once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('used again later, it is refused', async () => {
    const user = await signUp(t);
    const { backupCodes } = await enableTotp(t, user.accessToken);
    expect((await reverify(t, user.accessToken, { backupCode: backupCodes[0] })).statusCode).toBe(200);
    const again = await reverify(t, user.accessToken, { backupCode: backupCodes[0]!.toUpperCase() });
    expect(again.statusCode).toBe(401);
    expect(json(again).error.code).toBe('invalid_credentials');
  });

  it('used twice at once, exactly one use succeeds', async () => {
    const user = await signUp(t);
    const { backupCodes } = await enableTotp(t, user.accessToken);
    // Three rounds: the losers count as wrong codes, and nine stay under the throttle's ten.
    for (const code of backupCodes.slice(0, 3)) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => reverify(t, user.accessToken, { backupCode: code })));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401, 401, 401]);
    }
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).backupCodes.remaining).toBe(7);
  });

  it('used at once on two app instances over one database, exactly one use succeeds', async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    const shared = { platformKey: t.platformKey, instanceSecret: t.instanceSecret };
    const a = await startTestApp({ ...shared, store: storeA! });
    const b = await startTestApp({ ...shared, store: storeB! });
    try {
      const user = await signUp(a, { environment: a.project.development });
      const { backupCodes } = await enableTotp(a, user.accessToken);
      for (const code of backupCodes.slice(0, 3)) {
        const answers = await Promise.all([a, b, a, b].map((node) => reverify(node, user.accessToken, { backupCode: code })));
        expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
      }
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('replaced codes stop working at once', async () => {
    const user = await signUp(t);
    const { backupCodes } = await enableTotp(t, user.accessToken);
    const replaced = await mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/backup-codes');
    expect(replaced.statusCode).toBe(200);
    expect((await reverify(t, user.accessToken, { backupCode: backupCodes[1] })).statusCode).toBe(401);
    expect((await reverify(t, user.accessToken, { backupCode: json(replaced).backupCodes[0] })).statusCode).toBe(200);
  });
});
