import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/index.js';
import { emailCollisionWarning } from '../../src/identity/email-collisions.js';
import { findEmailCollisions } from '../../src/identity/queries.js';
import { hashPassword } from '../../src/identity/passwords.js';
import { TenancyService } from '../../src/tenancy/service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { TestEnvironment } from '../helpers/app.js';
import { json, signIn } from '../helpers/identity.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

const BEFORE = '0006_flow_tokens';

const PASSWORDS = { older: 'older passphrase one', newer: 'newer passphrase two', newest: 'newest passphrase three' };
const USER_COLUMNS = ['environment_id', 'id', 'email', 'username', 'first_name', 'last_name', 'image_url', 'password_hash', 'created_at', 'updated_at'];

describe('migration 0007: email keys over existing rows', { timeout: 60_000 }, () => {
  let store: TestStore;
  let t: TestApp | undefined;
  let env: TestEnvironment;
  let otherEnvId: string;
  let before: Record<string, unknown>[];

  beforeAll(async () => {
    store = await openTestStore(BEFORE); // as an instance upgrading from the release before email keys
    const { environments } = await new TenancyService(store).createProject({ name: 'Upgraded', domain: 'example.test' });
    const dev = environments.find((e) => e.environment.type === 'development')!;
    env = { id: dev.environment.id, publishableKey: dev.environment.publishableKey, secretKey: dev.secretKey };
    otherEnvId = environments.find((e) => e.environment.type === 'production')!.environment.id;

    // The rows an instance could hold before keys: the old unique index was on the exact address.
    const db = store.db as unknown as Kysely<any>;
    const user = async (environmentId: string, id: string, email: string, createdAt: number, password?: string) => ({
      environment_id: environmentId,
      id,
      email,
      username: null,
      first_name: id,
      last_name: null,
      image_url: null,
      password_hash: password ? await hashPassword(password) : null,
      created_at: createdAt,
      updated_at: createdAt,
    });
    await db
      .insertInto('users')
      .values([
        await user(env.id, 'user_newer', 'ada@example.test', 2000, PASSWORDS.newer),
        await user(env.id, 'user_older', 'Ada@example.test', 1000, PASSWORDS.older),
        await user(env.id, 'user_newest', 'ADA@example.test', 3000, PASSWORDS.newest),
        // Same address in another environment: not a collision.
        await user(otherEnvId, 'user_elsewhere', 'ada@example.test', 1000),
        // SQLite's lower() leaves É alone; the key must still fold it.
        await user(env.id, 'user_elodie', 'ÉLODIE@example.test', 1500),
        await user(env.id, 'user_alone', 'Grace@example.test', 1500),
      ])
      .execute();
    await db
      .insertInto('flow_tokens')
      .values({
        environment_id: env.id,
        id: 'flow_1',
        purpose: 'email_code',
        email: 'Élodie.New@example.test',
        user_id: null,
        secret_hash: 'x',
        created_at: 1,
        expires_at: 2,
      })
      .execute();
    await db
      .insertInto('email_outbox')
      .values({
        environment_id: env.id,
        id: 'msg_1',
        kind: 'magic_link',
        to_address: 'Grace@example.test',
        subject: 's',
        text_body: '',
        html_body: '',
        status: 'sent',
        next_attempt_at: 1,
        created_at: 1,
      })
      .execute();
    before = await db.selectFrom('users').select(USER_COLUMNS).orderBy('id').execute();

    await migrate(store, store.schema);
  });
  afterAll(async () => {
    if (t) await t.close();
    else await store.close();
  });

  it('changes no user, merges nothing and fills every key', async () => {
    const db = store.db as unknown as Kysely<any>;
    expect(await db.selectFrom('users').select(USER_COLUMNS).orderBy('id').execute()).toEqual(before);
    const keys = Object.fromEntries(
      (await store.db.selectFrom('users').select(['id', 'email_key', 'email_collision']).execute()).map((r) => [
        r.id,
        [r.email_key, r.email_collision],
      ]),
    );
    expect(keys).toEqual({
      user_older: ['ada@example.test', 0],
      user_newer: ['ada@example.test', 1],
      user_newest: ['ada@example.test', 1],
      user_elsewhere: ['ada@example.test', 0],
      user_elodie: ['élodie@example.test', 0],
      user_alone: ['grace@example.test', 0],
    });
    expect((await store.db.selectFrom('flow_tokens').select('email_key').executeTakeFirstOrThrow()).email_key).toBe('élodie.new@example.test');
    expect((await store.db.selectFrom('email_outbox').select('to_key').executeTakeFirstOrThrow()).to_key).toBe('grace@example.test');
  });

  it('reports the colliding users, oldest first, by environment and id, without their addresses', async () => {
    expect(await findEmailCollisions(store.db)).toEqual([{ environmentId: env.id, userIds: ['user_older', 'user_newer', 'user_newest'] }]);
    const warning = (await emailCollisionWarning(store.db)).join('\n');
    expect(warning).toContain(`${env.id}: user_older, user_newer, user_newest`);
    expect(warning).not.toMatch(/@example\.test/);
  });

  it('keeps every colliding user working: each address as stored signs its own user in, other spellings the oldest', async () => {
    t = await startTestApp({ store });
    const signInAs = async (email: string, password: string) => {
      const res = await signIn(t!, email, password, env);
      expect(res.statusCode, `${email}: ${res.body}`).toBe(200);
      return json(res).user;
    };
    expect(await signInAs('Ada@example.test', PASSWORDS.older)).toEqual({ id: 'user_older', email: 'Ada@example.test' });
    expect(await signInAs('ada@example.test', PASSWORDS.newer)).toEqual({ id: 'user_newer', email: 'ada@example.test' });
    expect(await signInAs('ADA@example.test', PASSWORDS.newest)).toEqual({ id: 'user_newest', email: 'ADA@example.test' });
    expect(await signInAs('aDa@example.test', PASSWORDS.older)).toMatchObject({ id: 'user_older' });
    const found = await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent('élodie@EXAMPLE.test')}`, credential: env.secretKey });
    expect(json(found).data.map((u: { id: string }) => u.id)).toEqual(['user_elodie']);

    const call = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
      t!.call({ method, url, credential: env.secretKey, ...(payload ? { payload } : {}) });
    // A new account for the contested address is refused, even once the oldest is gone.
    expect((await call('POST', '/v1/users', { email: 'aDA@example.test' })).statusCode).toBe(409);
    // Resolving: the operator gives one user another address; the group shrinks, then disappears.
    expect((await call('PATCH', '/v1/users/user_newest', { email: 'ada.work@example.test' })).statusCode).toBe(200);
    expect(await findEmailCollisions(store.db)).toEqual([{ environmentId: env.id, userIds: ['user_older', 'user_newer'] }]);
    expect((await call('DELETE', '/v1/users/user_older')).statusCode).toBe(200);
    expect(await findEmailCollisions(store.db)).toEqual([]);
    expect(await emailCollisionWarning(store.db)).toEqual([]);
    // Attack: with the oldest gone, no unmarked user holds the key, so the unique index alone would let a
    // second account into the group (and other spellings would reach it). Both ways in are refused.
    expect((await call('POST', '/v1/users', { email: 'aDA@example.test' })).statusCode).toBe(409);
    expect((await call('PATCH', '/v1/users/user_alone', { email: 'ADA@example.test' })).statusCode).toBe(409);
    expect(await signInAs('aDa@example.test', PASSWORDS.newer)).toMatchObject({ id: 'user_newer' });
  });
});
