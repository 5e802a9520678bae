import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, me, refresh, signIn, signUp, uniqueEmail } from '../helpers/identity.js';

describe('/v1/users (secret key)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp();
    sk = t.project.development.secretKey;
  });
  afterAll(() => t.close());

  const create = (payload: Record<string, unknown>, key = sk) => t.call({ method: 'POST', url: '/v1/users', credential: key, payload });
  const get = (url: string, key = sk) => t.call({ method: 'GET', url, credential: key });

  it('creates a user (201, bare object) who can then sign in', async () => {
    const email = uniqueEmail('admin');
    const response = await create({ email, password: GOOD_PASSWORD, firstName: 'Grace', username: 'grace' });
    expect(response.statusCode).toBe(201);
    expect(json(response)).toEqual({
      id: expect.stringMatching(/^user_/),
      email,
      firstName: 'Grace',
      lastName: null,
      username: 'grace',
      imageUrl: null,
      passwordEnabled: true,
      emailVerified: false,
      banned: false,
      publicMetadata: {},
      privateMetadata: {},
      unsafeMetadata: {},
      externalId: null,
      twoFactorEnabled: false,
      lastSignInAt: null,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect((await signIn(t, email, GOOD_PASSWORD)).statusCode).toBe(200);
    const signedIn = json(await get(`/v1/users/${json(response).id}`));
    expect(signedIn.lastSignInAt).toBeGreaterThanOrEqual(json(response).createdAt);
    // Stamping the sign-in is not an update of the user.
    expect(signedIn.updatedAt).toBe(json(response).updatedAt);
  });

  it('creates a user without a password, who cannot sign in by password (same 401 as a wrong one)', async () => {
    const email = uniqueEmail('nopw');
    const response = await create({ email });
    expect(response.statusCode).toBe(201);
    expect(json(response).passwordEnabled).toBe(false);
    const signin = await signIn(t, email, GOOD_PASSWORD);
    expect(signin.statusCode).toBe(401);
    expect(json(signin).error.code).toBe('invalid_credentials');
  });

  it('applies the email and password rules and uniqueness', async () => {
    expect((await create({ email: 'Ada <ada@example.test>' })).statusCode).toBe(400);
    expect((await create({ email: uniqueEmail(), password: 'password' })).statusCode).toBe(422);
    const email = uniqueEmail('twice');
    expect((await create({ email })).statusCode).toBe(201);
    expect((await create({ email })).statusCode).toBe(409);
  });

  it('reads a user; an id of another environment or an unknown id is 404', async () => {
    const created = json(await create({ email: uniqueEmail('read') }));
    expect(json(await get(`/v1/users/${created.id}`))).toEqual(created);
    const other = await get(`/v1/users/${created.id}`, t.project.production.secretKey);
    expect(other.statusCode).toBe(404);
    expect(json(other).error.code).toBe('not_found');
    expect((await get('/v1/users/user_doesnotexist')).statusCode).toBe(404);
  });

  it('lists users newest first with opaque, tamper-checked cursors', async () => {
    const project = await t.createProject('listing');
    const key = project.development.secretKey;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(json(await create({ email: `list${i}@example.test`, firstName: `Person${i}` }, key)).id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await get(`/v1/users?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
      expect(response.statusCode).toBe(200);
      const body = json(response);
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((u: { id: string }) => u.id));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);

    const first = json(await get('/v1/users?limit=2', key));
    const tampered = first.nextCursor.slice(0, -2) + (first.nextCursor.endsWith('AA') ? 'BB' : 'AA');
    const refused = await get(`/v1/users?limit=2&cursor=${encodeURIComponent(tampered)}`, key);
    expect(refused.statusCode).toBe(400);
    expect(json(refused).error.details).toEqual({ fields: ['cursor'] });
    // A cursor of another environment is refused too.
    const foreign = await get(`/v1/users?cursor=${encodeURIComponent(first.nextCursor)}`, sk);
    expect(foreign.statusCode).toBe(400);

    expect((await get('/v1/users?limit=0', key)).statusCode).toBe(400);
    expect((await get('/v1/users?limit=101', key)).statusCode).toBe(400);
  });

  it('filters by email and by query', async () => {
    const project = await t.createProject('filters');
    const key = project.development.secretKey;
    await create({ email: 'alice@filters.test', firstName: 'Alice', lastName: 'Liddell' }, key);
    await create({ email: 'bob@filters.test', firstName: 'Bob', username: 'builder_bob' }, key);
    await create({ email: 'carol_100%@filters.test', firstName: 'Carol' }, key);

    // Addresses match whatever their case; the address is shown as it was typed.
    expect(json(await get('/v1/users?email=ALICE@Filters.test', key)).data.map((u: { email: string }) => u.email)).toEqual([
      'alice@filters.test',
    ]);
    expect(json(await get('/v1/users?email=alice@FILTERS.test', key)).data.map((u: { email: string }) => u.email)).toEqual([
      'alice@filters.test',
    ]);
    expect(json(await get('/v1/users?query=LIDD', key)).data.map((u: { firstName: string }) => u.firstName)).toEqual(['Alice']);
    expect(json(await get('/v1/users?query=builder', key)).data.map((u: { firstName: string }) => u.firstName)).toEqual(['Bob']);
    // LIKE wildcards in the query are literal.
    expect(json(await get(`/v1/users?query=${encodeURIComponent('100%')}`, key)).data).toHaveLength(1);
    expect(json(await get(`/v1/users?query=${encodeURIComponent('_')}`, key)).data).toHaveLength(2);
    expect(json(await get(`/v1/users?query=${encodeURIComponent('%')}`, key)).data).toHaveLength(1);
  });

  it('patches a user; omitted fields are unchanged', async () => {
    const created = json(await create({ email: uniqueEmail('patch'), firstName: 'Old', lastName: 'Name' }));
    const response = await t.call({
      method: 'PATCH',
      url: `/v1/users/${created.id}`,
      credential: sk,
      payload: { firstName: 'New', imageUrl: 'https://img.example.test/x.webp' },
    });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ firstName: 'New', lastName: 'Name', imageUrl: 'https://img.example.test/x.webp' });
    const foreign = await t.call({
      method: 'PATCH',
      url: `/v1/users/${created.id}`,
      credential: t.project.production.secretKey,
      payload: { firstName: 'X' },
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('revokes all sessions of a user', async () => {
    const user = await signUp(t);
    const second = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    const response = await t.call({ method: 'POST', url: `/v1/users/${user.userId}/sessions/revoke`, credential: sk });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({ revoked: 2 });
    expect(json(await me(t, user.accessToken)).error.code).toBe('session_revoked');
    expect(json(await refresh(t, second.refreshToken)).error.code).toBe('session_revoked');
    const foreign = await t.call({
      method: 'POST',
      url: `/v1/users/${user.userId}/sessions/revoke`,
      credential: t.project.production.secretKey,
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('deletes a user: their tokens stop working and the user is gone', async () => {
    const user = await signUp(t);
    const foreign = await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}`, credential: t.project.production.secretKey });
    expect(foreign.statusCode).toBe(404);

    const response = await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}`, credential: sk });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({ id: user.userId, deleted: true });
    expect((await me(t, user.accessToken)).statusCode).toBe(401);
    expect((await refresh(t, user.refreshToken)).statusCode).toBe(401);
    expect((await get(`/v1/users/${user.userId}`)).statusCode).toBe(404);
    expect((await signIn(t, user.email, GOOD_PASSWORD)).statusCode).toBe(401);
    // The address is free again.
    expect((await create({ email: user.email })).statusCode).toBe(201);
  });

  it('refuses other credentials', async () => {
    expect((await get('/v1/users', t.project.development.publishableKey)).statusCode).toBe(403);
    expect((await get('/v1/users', t.platformKey)).statusCode).toBe(403);
    const fromBrowser = await t.call({ method: 'GET', url: '/v1/users', credential: sk, headers: { origin: 'https://example.test' } });
    expect(fromBrowser.statusCode).toBe(403);
  });
});
