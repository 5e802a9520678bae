import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall } from '../helpers/mfa.js';
import { untilWaitingForUserRow, withQueryHook } from '../helpers/store.js';

/**
 * A change that needs a recent verification reads the caller's session in its transaction (locked
 * FOR SHARE on PostgreSQL, so no revocation slips in before it commits), and then the user's row; a
 * revoke-all locks the user's row, then updates the sessions. Taken in those orders, each waits for
 * the other: PostgreSQL aborts one (deadlock detected) and it answers 500. Every transaction that
 * holds both takes the user's row first (sessions/queries.ts, lockSessionsOwner).
 */
describe('lock order: a revoke-all racing a change that needs reverification', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('an administrator revokes every session while the user replaces their backup codes: both succeed, neither deadlocks', async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken);
    // Once the change's transaction has read the session, the revoke-all starts and is let run until it waits.
    let revoking: Promise<LightMyRequestResponse> | undefined;
    const replaced = await withQueryHook(
      t.store,
      async (query, _result, inTransaction) => {
        if (inTransaction && revoking === undefined && /^select .* from "sessions"/i.test(query.sql)) {
          revoking = t.call({
            method: 'POST',
            url: `/v1/users/${user.userId}/sessions/revoke`,
            credential: t.project.development.secretKey,
          });
          await Promise.race([revoking, untilWaitingForUserRow(t.store)]);
        }
      },
      () => mfaCall(t, user.accessToken, 'POST', '/v1/me/mfa/backup-codes'),
    );
    expect(revoking, 'the change read the session in its transaction').toBeDefined();
    const revoked = await revoking!;
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(json(replaced).backupCodes).toHaveLength(10);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(json(revoked)).toMatchObject({ revoked: 1 });
    // The revoke-all waited for the change, then revoked the session.
    expect((await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).statusCode).toBe(401);
  });
});
