import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start } from '../helpers/flows.js';
import { GOOD_PASSWORD, signIn, signUp, uniqueEmail, type SignedIn } from '../helpers/identity.js';
import { inTransaction } from '../../src/db/changes.js';
import { revokeUserSessions } from '../../src/sessions/queries.js';
import { untilWaitingForUserRow, withQueryHook } from '../helpers/store.js';

describe('handoff attacks', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  async function token(redirectUrl = REDIRECT, minter?: SignedIn): Promise<string> {
    const user = minter ?? (await signUp(t));
    const res = await t.call({ method: 'POST', url: '/v1/me/handoff', credential: user.accessToken, payload: { redirectUrl } });
    expect(res.statusCode).toBe(200);
    return new URLSearchParams(new URL(res.json().redirectUrl).hash.slice(1)).get('__gh_handoff')!;
  }
  const sessionsOf = (userId: string) =>
    t.store.db
      .selectFrom('sessions')
      .select(['id', 'revoked_at'])
      .where('environment_id', '=', env().id)
      .where('user_id', '=', userId)
      .execute();
  const exchange = (value: string, publishableKey = env().publishableKey) =>
    t.call({ method: 'POST', url: '/v1/auth/handoff', credential: publishableKey, payload: { token: value } });

  it('replaying a used handoff token is refused', async () => {
    const value = await token();
    expect((await exchange(value)).statusCode).toBe(200);
    const again = await exchange(value);
    expect(again.statusCode).toBe(401);
    expect(again.json().error.code).toBe('invalid_credentials');
  });

  it('two racing exchanges of one token: exactly one wins', async () => {
    const value = await token();
    const results = await Promise.all([exchange(value), exchange(value), exchange(value)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401]);
  });

  it('a handoff token older than 60 s is refused', async () => {
    const value = await token();
    clock.advance(60_001);
    expect((await exchange(value)).json().error.code).toBe('invalid_credentials');
  });

  it('a handoff token from one environment is refused by another', async () => {
    const value = await token();
    const other = await t.createProject('Other project');
    expect((await exchange(value, other.development.publishableKey)).statusCode).toBe(401);
    // Still good where it was issued: the refusal did not consume it.
    expect((await exchange(value)).statusCode).toBe(200);
  });

  it('a handoff to an origin outside the lock is refused before any token exists', async () => {
    const user = await signUp(t);
    const res = await t.call({
      method: 'POST',
      url: '/v1/me/handoff',
      credential: user.accessToken,
      payload: { redirectUrl: 'https://evil.example.com/x' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });

  it('only a hash of the token is stored', async () => {
    const value = await token();
    const rows = await t.store.db.selectFrom('handoff_tokens').selectAll().where('environment_id', '=', env().id).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(value);
  });

  it('a guessed token is refused', async () => {
    expect((await exchange('A'.repeat(43))).statusCode).toBe(401);
  });

  const pendingOf = async (userId: string) =>
    (
      await t.store.db
        .selectFrom('handoff_tokens')
        .select('id')
        .where('environment_id', '=', env().id)
        .where('user_id', '=', userId)
        .where('consumed_at', 'is', null)
        .execute()
    ).length;

  it('a handoff token is refused once its session is signed out', async () => {
    const user = await signUp(t);
    const value = await token(REDIRECT, user);
    const out = await t.call({
      method: 'POST',
      url: '/v1/auth/signout',
      credential: env().publishableKey,
      payload: { refreshToken: user.refreshToken },
    });
    expect(out.statusCode).toBe(204);
    expect(await pendingOf(user.userId)).toBe(0);
    expect((await exchange(value)).json().error.code).toBe('invalid_credentials');
  });

  it('revoke-all: a handoff token minted before an administrator revokes every session is refused', async () => {
    const user = await signUp(t);
    const value = await token(REDIRECT, user);
    const revoked = await t.call({ method: 'POST', url: `/v1/users/${user.userId}/sessions/revoke`, credential: env().secretKey });
    expect(revoked.statusCode).toBe(200);
    expect(await pendingOf(user.userId)).toBe(0);
    const res = await exchange(value);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('invalid_credentials');
  });

  it('password change: a token minted by a session another session signs out is refused; the changing session keeps its own', async () => {
    const attacker = await signUp(t);
    const stolen = await token(REDIRECT, attacker);
    // The owner signs in elsewhere and changes the password, which revokes every other session.
    const owner = (await signIn(t, attacker.email, GOOD_PASSWORD)).json().session;
    const ownersOwn = await token(REDIRECT, { ...attacker, accessToken: owner.accessToken });
    const changed = await t.call({
      method: 'POST',
      url: '/v1/me/password',
      credential: owner.accessToken,
      payload: { currentPassword: GOOD_PASSWORD, newPassword: `${GOOD_PASSWORD} changed` },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().otherSessionsRevoked).toBe(1);
    expect((await exchange(stolen)).json().error.code).toBe('invalid_credentials');
    expect((await exchange(ownersOwn)).statusCode).toBe(200);
  });

  it("pre-registration takeover: a squatter's handoff token is refused once the owner proves the address", async () => {
    // The squatter signs up with the victim's address and a password of their own, and mints a token.
    const squatter = await signUp(t, { email: uniqueEmail('victim') });
    const value = await token(REDIRECT, squatter);
    // The owner proves the address with an emailed code: the squatter's password and sessions go.
    await start(t, 'email-code', { email: squatter.email });
    const owner = await start(t, 'email-code/verify', { email: squatter.email, code: codeFrom((await outbox(t, squatter.email))[0]!) });
    expect(owner.statusCode).toBe(200);
    expect(await pendingOf(squatter.userId)).toBe(0);
    expect((await exchange(value)).json().error.code).toBe('invalid_credentials');
  });

  it('a revoke-all that commits between the consume and the new session leaves no live session', async () => {
    const user = await signUp(t);
    const value = await token(REDIRECT, user);
    // Forces the interleaving: the administrator's revoke-all commits as soon as the consume has,
    // before the exchange starts its session (which the revoke therefore cannot see).
    let revokeStatus: number | undefined;
    const res = await withQueryHook(
      t.store,
      async (query, result, inATransaction) => {
        if (!inATransaction && revokeStatus === undefined && /^update "handoff_tokens"/i.test(query.sql) && result.rows.length > 0) {
          revokeStatus = 0;
          const revoked = await t.call({ method: 'POST', url: `/v1/users/${user.userId}/sessions/revoke`, credential: env().secretKey });
          revokeStatus = revoked.statusCode;
        }
      },
      () => exchange(value),
    );
    expect(revokeStatus).toBe(200);
    const sessions = await sessionsOf(user.userId);
    // The exchange did start a session after the revoke, and revoked it at once.
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s) => s.revoked_at === null)).toEqual([]);
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.code).toBe('invalid_credentials');
  });

  it('a revoke-all under way before the new session starts and committed after the exchange re-reads its minting session leaves no live session', async () => {
    const user = await signUp(t);
    const value = await token(REDIRECT, user);
    // The window the re-read alone left open on PostgreSQL: the revoke-all's transaction has revoked
    // the sessions it sees, and stays open, while the exchange starts its session and re-reads the
    // minting session (not yet revoked, as far as another transaction can tell). It commits only
    // once the exchange has answered or waits for the user's row it locked (after 500 ms on SQLite).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let revoking: Promise<number> | undefined;
    const res = await withQueryHook(
      t.store,
      async (query, result, inATransaction) => {
        if (!inATransaction && revoking === undefined && /^update "handoff_tokens"/i.test(query.sql) && result.rows.length > 0) {
          let revoked!: () => void;
          const revokedNow = new Promise<void>((resolve) => (revoked = resolve));
          revoking = inTransaction(t.store.db, async (tx) => {
            const count = await revokeUserSessions(t.store, tx, env().id, user.userId, { now: clock.now(), activeSince: 0 });
            revoked();
            await released;
            return count;
          });
          await revokedNow;
        }
      },
      async () => {
        try {
          const answer = exchange(value);
          await Promise.race([answer, untilWaitingForUserRow(t.store)]);
          release();
          return await answer;
        } finally {
          release();
        }
      },
    );
    expect(await revoking).toBe(1);
    const sessions = await sessionsOf(user.userId);
    expect(sessions.filter((s) => s.revoked_at === null)).toEqual([]);
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.code).toBe('invalid_credentials');
  });

  it('a token whose session was revoked behind the deletion (a row left over) is still refused at the exchange', async () => {
    const user = await signUp(t);
    const value = await token(REDIRECT, user);
    // Revoked by a direct write, as a revocation that deleted nothing would leave it.
    await t.store.db
      .updateTable('sessions')
      .set({ revoked_at: clock.now() })
      .where('environment_id', '=', env().id)
      .where('user_id', '=', user.userId)
      .execute();
    expect(await pendingOf(user.userId)).toBe(1);
    expect((await exchange(value)).json().error.code).toBe('invalid_credentials');
  });
});

describe('hosted pages behind a forged Host header', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("a forged Host cannot point the page's API calls at another server: the base URL is GATEHOUSE_BASE_URL's", async () => {
    const env = t.project.development;
    const res = await t.call({
      method: 'GET',
      url: `/hosted/${env.id}/sign-in`,
      headers: { host: 'evil.example.com', 'x-forwarded-host': 'evil.example.com', 'x-forwarded-proto': 'https' },
    });
    expect(res.statusCode).toBe(200);
    const config = JSON.parse(/<script id="gatehouse-config" type="application\/json">(.*?)<\/script>/.exec(res.body)![1]!);
    expect(config.baseUrl).toBe(BASE_URL);
    expect(res.body).not.toContain('evil.example.com');
  });
});
