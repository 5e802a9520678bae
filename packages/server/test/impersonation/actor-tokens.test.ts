import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, me, refresh } from '../helpers/identity.js';
import { person, type Person } from '../helpers/organizations.js';
import { enableTotp } from '../helpers/mfa.js';
import { testDb } from '../helpers/store.js';
import { CONSOLE_ORIGIN, firstOperator } from '../operators/helpers.js';
import { actorSession, actorToken, redeem } from './helpers.js';

describe(`actor tokens (${testDb()})`, { timeout: 30_000 }, () => {
  let t: TestApp;
  let alice: Person;
  const clock = testClock();
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    alice = await person(t, undefined, 'alice');
  }, 60_000);
  afterAll(() => t.close());

  it('mints a token (only its hash kept) whose url is the hosted actor page, and redeems it for a session with act and amr ["actor"]', async () => {
    const minted = await actorToken(t, alice.userId, 'support:ada');
    expect(minted.id).toMatch(/^act_/);
    const env = t.project.development.id;
    expect(minted.url).toBe(`http://gatehouse.test/hosted/${env}/actor?token=${encodeURIComponent(minted.token)}`);
    expect(minted.expiresAt).toBe(clock.now() + 600_000);
    const rows = await t.store.db.selectFrom('actor_tokens').selectAll().where('environment_id', '=', t.project.development.id).where('id', '=', minted.id).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain(minted.token);

    const redeemed = await redeem(t, minted.token);
    expect(redeemed.statusCode, redeemed.body).toBe(200);
    const body = json(redeemed);
    expect(body.user.id).toBe(alice.userId);
    const claims = decodeJwt(body.session.accessToken).payload;
    expect(claims.sub).toBe(alice.userId);
    expect(claims.act).toEqual({ sub: 'support:ada' });
    expect(claims.amr).toEqual(['actor']);
    expect((await me(t, body.session.accessToken)).statusCode).toBe(200);
    // The user's session list names the actor of that session, and of no other.
    const listed = json(await t.call({ method: 'GET', url: `/v1/users/${alice.userId}/sessions`, credential: t.project.development.secretKey })).data as {
      id: string;
      actor?: { sub: string };
    }[];
    expect(listed.find((s) => s.id === claims.sid)?.actor).toEqual({ sub: 'support:ada' });
    expect(listed.filter((s) => s.actor !== undefined)).toHaveLength(1);
  });

  it('skips the second factor, keeps act at refresh and through a hosted handoff, and lives at most an hour', async () => {
    const bob = await person(t, undefined, 'bob');
    await enableTotp(t, bob.accessToken, clock.now);
    const session = await actorSession(t, bob.userId, 'support:bo');
    const started = clock.now();
    clock.advance(20 * 60_000);
    const refreshed = await refresh(t, session.refreshToken);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const next = json(refreshed).session;
    expect(decodeJwt(next.accessToken).payload.act).toEqual({ sub: 'support:bo' });
    expect(decodeJwt(next.accessToken).payload.amr).toEqual(['actor']);
    const row = await t.store.db.selectFrom('sessions').select(['actor', 'expires_at']).where('environment_id', '=', t.project.development.id).where('id', '=', decodeJwt(next.accessToken).payload.sid).executeTakeFirstOrThrow();
    expect(row.actor).toBe('support:bo');
    expect(Number(row.expires_at)).toBe(started + 3_600_000);
  });

  it('records who minted and who redeemed in the audit log, and session.created carries the actor', async () => {
    const minted = await actorToken(t, alice.userId, 'support:audit');
    const redeemed = json(await redeem(t, minted.token));
    const log = json(await t.call({ method: 'GET', url: '/v1/platform/audit-log?limit=100', credential: t.platformKey })).data as {
      actor: { kind: string; id: string | null };
      action: string;
      target: string;
    }[];
    const target = `/v1/platform/environments/${t.project.development.id}/users/${alice.userId}`;
    expect(log).toContainEqual(expect.objectContaining({ action: `actor_token.created ${minted.id} as support:audit`, target, actor: expect.objectContaining({ kind: 'secret_key' }) }));
    expect(log).toContainEqual(expect.objectContaining({ action: `actor_token.redeemed ${minted.id}`, target, actor: { kind: 'actor', id: 'support:audit', email: null } }));
    const sid = decodeJwt(redeemed.session.accessToken).payload.sid;
    const events = await t.store.db.selectFrom('webhook_events').select(['type', 'body']).where('environment_id', '=', t.project.development.id).execute();
    const created = events.filter((e) => e.type === 'session.created').map((e) => JSON.parse(e.body)).find((b) => JSON.stringify(b).includes(sid));
    expect(JSON.stringify(created)).toContain('"actor":{"sub":"support:audit"}');
  });

  it("lets an operator mint through the platform's copy, acting as themself whatever the body says", async () => {
    const operator = await firstOperator(t);
    const env = t.project.development.id;
    const response = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${env}/actor-tokens`,
      headers: { authorization: `Bearer ${operator.accessToken}`, origin: CONSOLE_ORIGIN },
      payload: { userId: alice.userId, actor: { sub: 'someone-else' }, expiresInSeconds: 120 },
    });
    expect(response.statusCode, response.body).toBe(201);
    const redeemed = json(await redeem(t, json(response).token));
    expect(decodeJwt(redeemed.session.accessToken).payload.act).toEqual({ sub: operator.userId });
  });
});
