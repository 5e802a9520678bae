import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, signIn, signUp } from '../helpers/identity.js';
import { withQueryHook } from '../helpers/store.js';

const NEW_PASSWORD = 'an entirely new passphrase 42';

/**
 * The owner changes a stolen password: every other session is revoked. A sign-in with the old
 * password that read the account just before (its hash check takes tens of milliseconds) must not
 * get a session after the change: the hash it verified is checked again where its session starts.
 */
describe('a sign-in with the old password racing a password change', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function liveSessionsOf(userId: string) {
    return t.store.db
      .selectFrom('sessions')
      .select('id')
      .where('environment_id', '=', t.project.development.id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** The attacker's sign-in, with the owner's password change committed once it has read the account (and the old hash). */
  async function signInAcrossAChange(owner: { email: string; accessToken: string }, environment = t.project.development) {
    let changed: LightMyRequestResponse | undefined;
    let changing = false;
    const attack = await withQueryHook(
      t.store,
      async (query, _result, inTransaction) => {
        if (!inTransaction && !changing && /from "users"/i.test(query.sql) && /"email_key"/i.test(query.sql)) {
          changing = true;
          changed = await t.call({
            method: 'POST',
            url: '/v1/me/password',
            credential: owner.accessToken,
            payload: { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD },
          });
        }
      },
      () => signIn(t, owner.email, GOOD_PASSWORD, environment),
    );
    expect(changed?.statusCode, changed?.body).toBe(200);
    return attack;
  }

  it('the change commits between the sign-in reading the account and its session: refused, no session survives the change', async () => {
    const owner = await signUp(t);
    const attack = await signInAcrossAChange(owner);
    expect(attack.statusCode, attack.body).toBe(401);
    expect(json(attack).error.code).toBe('invalid_credentials');
    expect(json(attack).error.message).toMatch(/password changed while you were signing in/);
    // Only the owner's own session, which made the change, is live.
    expect(await liveSessionsOf(owner.userId)).toHaveLength(1);
    // The new password signs in; the old one is simply wrong.
    expect((await signIn(t, owner.email, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await signIn(t, owner.email, GOOD_PASSWORD)).statusCode).toBe(401);
  });

  it('under mfa "required", the old password gets no setup attempt either (it would enrol a factor of its own and sign in)', async () => {
    const project = await t.createProject('Required');
    const environment = project.development;
    const owner = await signUp(t, { environment });
    await t.setSettings(environment.id, { mfa: 'required' });
    const attack = await signInAcrossAChange(owner, environment);
    expect(attack.statusCode, attack.body).toBe(401);
    expect(json(attack).error.message).toMatch(/password changed while you were signing in/);
    const attempts = await t.store.db
      .selectFrom('sign_in_attempts')
      .select('id')
      .where('environment_id', '=', environment.id)
      .where('user_id', '=', owner.userId)
      .execute();
    expect(attempts).toEqual([]);
    // The new password still gets its setup step.
    expect(json(await signIn(t, owner.email, NEW_PASSWORD, environment)).status).toBe('needs_second_factor_setup');
  });
});
