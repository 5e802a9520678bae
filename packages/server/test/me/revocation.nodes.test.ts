import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import type { TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { decodeJwt, GOOD_PASSWORD, json, me, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { addMember, createOrg, plainUser } from '../helpers/organizations.js';
import { REDIS_URL } from '../helpers/redis.js';
import { startRelayedNodes, type RelayedNodes } from '../helpers/relay.js';
import { testDb } from '../helpers/store.js';

/**
 * "Once the revoking response is sent, no node serves the old state": node B caches a session (or
 * an organization list), node A revokes it, and B is asked the moment A's 2xx arrives. Sign-out
 * runs 1,000 rounds; the other kinds 100 each (their rounds cost one to three argon2 hashes), to keep
 * the suite short. `REVOCATION_ROUNDS=1000` runs every kind 1,000 times (about two minutes on a shared
 * 2-core machine). Before the fix (announcement after the response), nearly every in-process round
 * was stale: 200 of 200 sign-outs, 96 of 100 user deletions, 100 of 200 membership removals.
 */
const OTHERS = Number(process.env.REVOCATION_ROUNDS ?? 100);
const ROUNDS = {
  signOut: Math.max(1000, OTHERS),
  sessionDeletion: OTHERS,
  membershipRemoval: OTHERS,
  userDeletion: OTHERS,
  passwordChange: OTHERS,
  passwordReset: OTHERS,
  ban: OTHERS,
};
const AT_ONCE = 8;
const NEW_PASSWORD = 'another horse battery staple';

const enabled = REDIS_URL !== undefined && testDb() === 'postgres';
const why = !REDIS_URL
  ? '(skipped: REDIS_URL unset)'
  : testDb() !== 'postgres'
    ? '(skipped: nodes share PostgreSQL; SQLite is one node)'
    : '(PostgreSQL + Redis)';

/**
 * Runs `count` rounds, AT_ONCE at a time (`worker` says which of them runs a round, so each can use
 * its own account: sign-in throttling counts attempts in flight per account); returns how many
 * found B serving the old state.
 */
async function staleRounds(count: number, round: (worker: number) => Promise<boolean>): Promise<number> {
  let started = 0;
  let stale = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async (_, worker) => {
      while (started < count) {
        started++;
        if (await round(worker)) stale++;
      }
    }),
  );
  return stale;
}

describe.skipIf(!enabled)(`revocation is at once on every node ${why}`, () => {
  let nodes: RelayedNodes;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    nodes = await startRelayedNodes({ platformKey: newSecret('plk_'), instanceSecret: newSecret('', 48) });
    ({ a, b } = nodes);
    // Thousands of requests a minute, counted by the limiter (whose script carries the change number).
    await a.setSettings(a.project.development.id, { rateLimitPerMinute: 1_000_000 });
  });
  afterAll(() => nodes?.close());

  /** B reads the profile twice, so it serves the session (and organization list) from its cache. */
  async function cachedOnB(accessToken: string): Promise<void> {
    for (let i = 0; i < 2; i++) {
      const response = await me(b, accessToken);
      expect(response.statusCode, response.body).toBe(200);
    }
  }

  /** Asks B right after the revoking response; true when B still accepts the session. */
  async function bStillAccepts(accessToken: string): Promise<boolean> {
    const response = await me(b, accessToken);
    if (response.statusCode === 200) return true;
    expect(response.statusCode, response.body).toBe(401);
    return false;
  }

  async function signedInSession(email: string) {
    const response = await signIn(a, email, GOOD_PASSWORD);
    expect(response.statusCode, response.body).toBe(200);
    return json(response).session as { accessToken: string; refreshToken: string };
  }

  it(`sign-out: ${ROUNDS.signOut} rounds, none stale`, { timeout: 600_000 }, async () => {
    const users = await Promise.all(Array.from({ length: AT_ONCE }, () => signUp(a)));
    const stale = await staleRounds(ROUNDS.signOut, async (worker) => {
      const session = await signedInSession(users[worker]!.email);
      await cachedOnB(session.accessToken);
      const signOut = await a.call({
        method: 'POST',
        url: '/v1/auth/signout',
        credential: a.project.development.publishableKey,
        payload: { refreshToken: session.refreshToken },
      });
      expect(signOut.statusCode, signOut.body).toBe(204);
      return bStillAccepts(session.accessToken);
    });
    expect(stale).toBe(0);
  });

  it(`revoking one session (DELETE /v1/me/sessions/{id}): ${ROUNDS.sessionDeletion} rounds, none stale`, { timeout: 600_000 }, async () => {
    const users = await Promise.all(Array.from({ length: AT_ONCE }, () => signUp(a)));
    const stale = await staleRounds(ROUNDS.sessionDeletion, async (worker) => {
      const session = await signedInSession(users[worker]!.email);
      await cachedOnB(session.accessToken);
      const revoked = await a.call({
        method: 'DELETE',
        url: `/v1/me/sessions/${decodeJwt(session.accessToken).payload.sid}`,
        credential: session.accessToken,
      });
      expect(revoked.statusCode, revoked.body).toBe(204);
      return bStillAccepts(session.accessToken);
    });
    expect(stale).toBe(0);
  });

  it(`membership removal: ${ROUNDS.membershipRemoval} rounds, none stale`, { timeout: 600_000 }, async () => {
    const owner = await plainUser(a);
    const members = await Promise.all(Array.from({ length: AT_ONCE }, () => signUp(a)));
    const stale = await staleRounds(ROUNDS.membershipRemoval, async () => {
      const member = members.pop()!;
      try {
        const organization = await createOrg(a, owner.id);
        await addMember(a, organization.id, member.userId);
        await cachedOnB(member.accessToken);
        const removed = await a.call({
          method: 'DELETE',
          url: `/v1/organizations/${organization.id}/members/${member.userId}`,
          credential: a.project.development.secretKey,
        });
        expect(removed.statusCode, removed.body).toBe(200);
        const probe = await me(b, member.accessToken);
        expect(probe.statusCode, probe.body).toBe(200);
        return json(probe).organizations.some((o: { id: string }) => o.id === organization.id);
      } finally {
        members.push(member);
      }
    });
    expect(stale).toBe(0);
  });

  it(`user deletion: ${ROUNDS.userDeletion} rounds, none stale`, { timeout: 600_000 }, async () => {
    const stale = await staleRounds(ROUNDS.userDeletion, async () => {
      const user = await signUp(a);
      await cachedOnB(user.accessToken);
      const deleted = await a.call({ method: 'DELETE', url: `/v1/users/${user.userId}`, credential: a.project.development.secretKey });
      expect(deleted.statusCode, deleted.body).toBe(200);
      return bStillAccepts(user.accessToken);
    });
    expect(stale).toBe(0);
  });

  it(`password change (revokes the other sessions): ${ROUNDS.passwordChange} rounds, none stale`, { timeout: 600_000 }, async () => {
    const stale = await staleRounds(ROUNDS.passwordChange, async () => {
      const user = await signUp(a);
      const other = await signedInSession(user.email);
      await cachedOnB(other.accessToken);
      const changed = await a.call({
        method: 'POST',
        url: '/v1/me/password',
        credential: user.accessToken,
        payload: { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD },
      });
      expect(changed.statusCode, changed.body).toBe(200);
      return bStillAccepts(other.accessToken);
    });
    expect(stale).toBe(0);
  });

  it('B still serves from its cache between changes (a write nobody announces goes unseen)', async () => {
    const user = await signUp(a);
    await cachedOnB(user.accessToken);
    await sql`update users set first_name = 'Unannounced' where environment_id = ${a.project.development.id} and id = ${user.userId}`.execute(
      a.store.db,
    );
    expect(json(await me(b, user.accessToken)).user.firstName).toBeNull();
  });

  it('a request whose session check reads the change number through the limiter is counted once', async () => {
    const user = await signUp(a);
    await cachedOnB(user.accessToken);
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await me(b, user.accessToken);
      expect(response.statusCode).toBe(200);
      remaining.push(Number(response.headers['x-ratelimit-remaining']));
    }
    expect([remaining[0]! - remaining[1]!, remaining[1]! - remaining[2]!]).toEqual([1, 1]);
  });

  it(`password reset (revokes every session): ${ROUNDS.passwordReset} rounds, none stale`, { timeout: 600_000 }, async () => {
    const stale = await staleRounds(ROUNDS.passwordReset, async () => {
      const user = await signUp(a, { email: uniqueEmail('reset') });
      await cachedOnB(user.accessToken);
      expect((await start(a, 'password-reset', { email: user.email, redirectUrl: REDIRECT })).statusCode).toBe(202);
      const token = tokenFrom((await outbox(a, user.email))[0]!);
      const reset = await start(a, 'password-reset/complete', { token, newPassword: NEW_PASSWORD });
      expect(reset.statusCode, reset.body).toBe(200);
      return bStillAccepts(user.accessToken);
    });
    expect(stale).toBe(0);
  });

  it(`ban (revokes every session): ${ROUNDS.ban} rounds, none stale`, { timeout: 600_000 }, async () => {
    const users = await Promise.all(Array.from({ length: AT_ONCE }, () => signUp(a)));
    const admin = (url: string) => a.call({ method: 'POST', url, credential: a.project.development.secretKey });
    const stale = await staleRounds(ROUNDS.ban, async (worker) => {
      const user = users[worker]!;
      const session = await signedInSession(user.email);
      await cachedOnB(session.accessToken);
      const banned = await admin(`/v1/users/${user.userId}/ban`);
      expect(banned.statusCode, banned.body).toBe(200);
      const accepted = await bStillAccepts(session.accessToken);
      expect((await admin(`/v1/users/${user.userId}/unban`)).statusCode).toBe(200);
      return accepted;
    });
    expect(stale).toBe(0);
  });
});
