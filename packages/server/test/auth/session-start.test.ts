import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvironmentId } from '../../src/lib/ids.js';
import { startSession } from '../../src/sessions/start-queries.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { plainUser } from '../helpers/organizations.js';

/** startSession: a sign-in's stamp, session and session.created event, written together or not at all. */
describe('starting a session', () => {
  let t: TestApp;
  let environmentId: EnvironmentId;
  beforeAll(async () => {
    t = await startTestApp();
    environmentId = t.project.development.id as EnvironmentId;
  });
  afterAll(() => t.close());

  const session = (id: string, userId: string, now: number) => ({
    id,
    user_id: userId,
    refresh_hash: `hash-${id}`,
    previous_hash: null,
    generation: 0,
    rotated_at: null,
    created_at: now,
    last_active_at: now,
    expires_at: now + 3_600_000,
    revoked_at: null,
    active_organization_id: null,
    user_agent: 'test',
    amr: '[]',
    first_factor_at: null,
    second_factor_at: null,
    actor: null,
  });
  const written = async (sessionId: string, userId: string) => ({
    session: await t.store.db
      .selectFrom('sessions')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('id', '=', sessionId)
      .executeTakeFirst(),
    events: (
      await t.store.db
        .selectFrom('webhook_events')
        .select('body')
        .where('environment_id', '=', environmentId)
        .where('type', '=', 'session.created')
        .execute()
    ).filter((e) => e.body.includes(sessionId)).length,
    lastSignInAt: (
      await t.store.db
        .selectFrom('users')
        .select('last_sign_in_at')
        .where('environment_id', '=', environmentId)
        .where('id', '=', userId)
        .executeTakeFirst()
    )?.last_sign_in_at,
  });

  it('writes the stamp, the session and its event, and answers the user', async () => {
    const user = await plainUser(t, t.project.development, 'starts');
    const now = Date.now() + 5_000;
    const started = await startSession(t.store.db, environmentId, session('sess_started00000000000000', user.id, now));
    expect(started).toMatchObject({ id: user.id, email: user.email, banned: 0 });
    expect(await written('sess_started00000000000000', user.id)).toEqual({
      session: { id: 'sess_started00000000000000' },
      events: 1,
      lastSignInAt: now,
    });
  });

  it("a banned user's sign-in writes nothing: no session, no event, no stamp", async () => {
    const user = await plainUser(t, t.project.development, 'banned');
    const ban = await t.call({ method: 'POST', url: `/v1/users/${user.id}/ban`, credential: t.project.development.secretKey });
    expect(ban.statusCode, ban.body).toBe(200);
    const started = await startSession(t.store.db, environmentId, session('sess_banned000000000000000', user.id, Date.now()));
    expect(started).toBe('banned');
    expect(await written('sess_banned000000000000000', user.id)).toEqual({ session: undefined, events: 0, lastSignInAt: null });
  });

  it('a user deleted before the session is written: nothing is written, and the answer says so', async () => {
    const user = await plainUser(t, t.project.development, 'deleted');
    const deleted = await t.call({ method: 'DELETE', url: `/v1/users/${user.id}`, credential: t.project.development.secretKey });
    expect(deleted.statusCode, deleted.body).toBeLessThan(300);
    const started = await startSession(t.store.db, environmentId, session('sess_gone00000000000000000', user.id, Date.now()));
    expect(started).toBeUndefined();
    expect(await written('sess_gone00000000000000000', user.id)).toEqual({ session: undefined, events: 0, lastSignInAt: undefined });
  });

  it("a ban committed while the sign-in waits for the user's row: the sign-in writes nothing", async () => {
    const user = await plainUser(t, t.project.development, 'banned-meanwhile');
    const ban = await t.store.db.startTransaction().execute();
    let settled = false;
    let started: Promise<unknown> | undefined;
    try {
      await ban.updateTable('users').set({ banned: 1 }).where('environment_id', '=', environmentId).where('id', '=', user.id).execute();
      // Holds the row's lock on PostgreSQL (the connection itself on SQLite): the sign-in's stamp waits for it.
      started = startSession(t.store.db, environmentId, session('sess_waited00000000000000000', user.id, Date.now())).finally(
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(settled).toBe(false);
      await ban.commit().execute();
    } catch (error) {
      await ban.rollback().execute();
      throw error;
    }
    expect(await started).toBe('banned');
    expect(await written('sess_waited00000000000000000', user.id)).toEqual({ session: undefined, events: 0, lastSignInAt: null });
  });
});
