import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, signIn, signUp } from '../helpers/identity.js';
import { enableTotp } from '../helpers/mfa.js';
import { enablePasskeys, registerPasskey, signInWithPasskey } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';
import { testDb } from '../helpers/store.js';

/** Single-use rows that expire are forgotten as new ones are made, so their tables stay small. */
describe(`expired second-factor attempts and actor tokens are swept (${testDb()})`, () => {
  let t: TestApp;
  const clock = testClock();
  const dev = () => t.project.development;
  const rows = async (table: 'sign_in_attempts' | 'actor_tokens') =>
    (
      await t.store.db
        .selectFrom(table)
        .select('id')
        .where('environment_id', '=', dev().id as never)
        .execute()
    ).length;
  const challenges = async () =>
    (
      await t.store.db
        .selectFrom('passkey_challenges')
        .select('attempt_id')
        .where('environment_id', '=', dev().id as never)
        .execute()
    ).length;

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('an attempt past its 10 minutes is deleted when the next one is issued', async () => {
    const user = await signUp(t, { password: GOOD_PASSWORD });
    await enableTotp(t, user.accessToken, clock.now);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(202);
    expect(await rows('sign_in_attempts')).toBe(1);
    clock.advance(10 * 60_000 + 1);
    const next = await signIn(t, user.email, GOOD_PASSWORD);
    expect(json(next).status).toBe('needs_second_factor');
    expect(await rows('sign_in_attempts')).toBe(1);
  });

  it('an expired actor token is deleted when the next one is minted', async () => {
    const user = await signUp(t);
    const mint = () =>
      t.call({
        method: 'POST',
        url: '/v1/actor-tokens',
        credential: dev().secretKey,
        payload: { userId: user.userId, actor: { sub: 'support:ada' }, expiresInSeconds: 60 },
      });
    expect((await mint()).statusCode).toBe(201);
    clock.advance(61_000);
    expect((await mint()).statusCode).toBe(201);
    expect(await rows('actor_tokens')).toBe(1);
  });

  it('answered sign-in challenges are deleted by a later verify 5 minutes after they expire, at most once a minute', async () => {
    await enablePasskeys(t);
    const user = await signUp(t);
    const authenticator = new SoftAuthenticator('http://localhost:3000');
    expect((await registerPasskey(t, user.accessToken, authenticator)).statusCode).toBe(201);
    const minute = 60_000;
    const signIn = async () => expect((await signInWithPasskey(t, authenticator)).statusCode).toBe(200);
    const before = await challenges();
    // An answered attempt's row is kept until 5 minutes after the attempt expires (10 after options).
    await signIn(); // A, at 0 (the registration swept a moment ago)
    clock.advance(9.5 * minute);
    await signIn(); // B, at 9.5: swept (nothing had expired)
    expect(await challenges()).toBe(before + 2);
    clock.advance(0.75 * minute);
    await signIn(); // C, at 10.25: A's row has expired, but the last sweep was 0.75 min ago
    expect(await challenges()).toBe(before + 3);
    clock.advance(0.5 * minute);
    await signIn(); // D, at 10.75: swept; A goes
    expect(await challenges()).toBe(before + 3);
  });
});
