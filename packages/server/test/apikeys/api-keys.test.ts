import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, type Person } from '../helpers/organizations.js';

describe('API keys', { timeout: 30_000 }, () => {
  let t: TestApp;
  let owner: Person;
  const clock = testClock();
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    owner = await person(t, undefined, 'keys');
  }, 60_000);
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;
  const verify = (secret: string) => t.call({ method: 'POST', url: '/v1/api-keys/verify', credential: sk(), payload: { secret } });

  it('a user creates a key, sees its secret once, lists it and verifies it', async () => {
    const created = await t.call({
      method: 'POST',
      url: '/v1/me/api-keys',
      credential: owner.accessToken,
      payload: { name: ' CI ', scopes: ['invoices:read', 'invoices:read', 'org:billing:manage'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { apiKey, secret } = json(created);
    expect(secret).toMatch(/^gh_ak_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toEqual({
      id: expect.stringMatching(/^ak_/),
      name: 'CI',
      subject: owner.userId,
      scopes: ['invoices:read', 'org:billing:manage'],
      createdAt: clock.now(),
      expiresAt: null,
      lastUsedAt: null,
    });

    const listed = json(await t.call({ method: 'GET', url: '/v1/me/api-keys', credential: owner.accessToken })).data;
    expect(listed).toEqual([apiKey]);
    expect(JSON.stringify(listed)).not.toContain(secret);

    const verified = await verify(secret);
    expect(verified.statusCode, verified.body).toBe(200);
    expect(json(verified)).toEqual({ id: apiKey.id, subject: owner.userId, scopes: apiKey.scopes, expiresAt: null });
  });

  it('lastUsedAt is written at the first use and then at most once a minute', async () => {
    const { apiKey, secret } = json(
      await t.call({ method: 'POST', url: '/v1/me/api-keys', credential: owner.accessToken, payload: { name: 'used' } }),
    );
    const lastUsed = async () =>
      (
        json(await t.call({ method: 'GET', url: '/v1/me/api-keys', credential: owner.accessToken })).data as Array<{
          id: string;
          lastUsedAt: number | null;
        }>
      ).find((k) => k.id === apiKey.id)!.lastUsedAt;
    const first = clock.now();
    expect((await verify(secret)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    clock.advance(30_000);
    expect((await verify(secret)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    clock.advance(31_000);
    expect((await verify(secret)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(clock.now());
  });

  it('a key expires at expiresAt', async () => {
    const { apiKey, secret } = json(
      await t.call({
        method: 'POST',
        url: '/v1/me/api-keys',
        credential: owner.accessToken,
        payload: { name: 'short', expiresInSeconds: 60 },
      }),
    );
    expect(apiKey.expiresAt).toBe(clock.now() + 60_000);
    expect((await verify(secret)).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await verify(secret)).statusCode).toBe(401);
  });

  it('revoking a key stops it at once', async () => {
    const { apiKey, secret } = json(
      await t.call({ method: 'POST', url: '/v1/me/api-keys', credential: owner.accessToken, payload: { name: 'gone' } }),
    );
    expect((await verify(secret)).statusCode).toBe(200);
    const revoked = await t.call({ method: 'DELETE', url: `/v1/me/api-keys/${apiKey.id}`, credential: owner.accessToken });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(json(revoked)).toEqual({ id: apiKey.id, deleted: true });
    expect((await verify(secret)).statusCode).toBe(401);
    expect((await t.call({ method: 'DELETE', url: `/v1/me/api-keys/${apiKey.id}`, credential: owner.accessToken })).statusCode).toBe(404);
  });

  it('refuses malformed scopes and blank names', async () => {
    for (const scopes of [['Invoices:read'], ['a b'], ['a:b:c:d:e'], [':read'], ['']]) {
      const response = await t.call({
        method: 'POST',
        url: '/v1/me/api-keys',
        credential: owner.accessToken,
        payload: { name: 'x', scopes },
      });
      expect(response.statusCode, `${JSON.stringify(scopes)}: ${response.body}`).toBe(400);
    }
    const blank = await t.call({ method: 'POST', url: '/v1/me/api-keys', credential: owner.accessToken, payload: { name: '   ' } });
    expect(blank.statusCode).toBe(400);
  });

  it('an organization key, by a manager on the session surface', async () => {
    const org = await createOrg(t, owner.userId, { name: 'Keyed' });
    await actAs(t, owner, org.id);
    const created = await t.call({
      method: 'POST',
      url: '/v1/me/organization/api-keys',
      credential: owner.accessToken,
      payload: { name: 'deploys' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { apiKey, secret } = json(created);
    expect(apiKey.subject).toBe(org.id);
    expect(json(await verify(secret)).subject).toBe(org.id);
    const listed = json(await t.call({ method: 'GET', url: '/v1/me/organization/api-keys', credential: owner.accessToken })).data;
    expect(listed.map((k: { id: string }) => k.id)).toEqual([apiKey.id]);
    const revoked = await t.call({ method: 'DELETE', url: `/v1/me/organization/api-keys/${apiKey.id}`, credential: owner.accessToken });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await verify(secret)).statusCode).toBe(401);
    await actAs(t, owner, null);
  });

  it('with the secret key: create for a user or an organization, list by subject in pages, revoke', async () => {
    const user = await plainUser(t, undefined, 'subject');
    const org = await createOrg(t, user.id, { name: 'Backend keyed' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await t.call({
        method: 'POST',
        url: '/v1/api-keys',
        credential: sk(),
        payload: { subject: user.id, name: `k${i}`, scopes: ['read'] },
      });
      expect(response.statusCode, response.body).toBe(201);
      ids.push(json(response).apiKey.id);
    }
    const orgKey = await t.call({ method: 'POST', url: '/v1/api-keys', credential: sk(), payload: { subject: org.id, name: 'org' } });
    expect(orgKey.statusCode, orgKey.body).toBe(201);
    expect(json(orgKey).apiKey.subject).toBe(org.id);

    const first = json(await t.call({ method: 'GET', url: `/v1/api-keys?subject=${user.id}&limit=2`, credential: sk() }));
    expect(first.data.map((k: { id: string }) => k.id)).toEqual([ids[2], ids[1]]);
    const second = json(
      await t.call({ method: 'GET', url: `/v1/api-keys?subject=${user.id}&limit=2&cursor=${first.nextCursor}`, credential: sk() }),
    );
    expect(second.data.map((k: { id: string }) => k.id)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeNull();
    // A cursor of one subject's listing does not continue another's.
    const foreign = await t.call({ method: 'GET', url: `/v1/api-keys?subject=${org.id}&cursor=${first.nextCursor}`, credential: sk() });
    expect(foreign.statusCode).toBe(400);

    for (const subject of ['user_doesnotexist', 'org_doesnotexist']) {
      expect((await t.call({ method: 'POST', url: '/v1/api-keys', credential: sk(), payload: { subject, name: 'x' } })).statusCode).toBe(
        404,
      );
    }
    expect(
      (await t.call({ method: 'POST', url: '/v1/api-keys', credential: sk(), payload: { subject: 'sess_1', name: 'x' } })).statusCode,
    ).toBe(400);

    expect((await t.call({ method: 'DELETE', url: `/v1/api-keys/${ids[0]}`, credential: sk() })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/v1/api-keys/${ids[0]}`, credential: sk() })).statusCode).toBe(404);
  });

  it("a user's keys go with the user, an organization's with the organization", async () => {
    const user = await plainUser(t, undefined, 'leaving');
    const org = await createOrg(t, user.id, { name: 'Leaving' });
    const userKey = json(
      await t.call({ method: 'POST', url: '/v1/api-keys', credential: sk(), payload: { subject: user.id, name: 'u' } }),
    ).secret;
    const orgKey = json(
      await t.call({ method: 'POST', url: '/v1/api-keys', credential: sk(), payload: { subject: org.id, name: 'o' } }),
    ).secret;
    expect((await verify(userKey)).statusCode).toBe(200);
    expect((await verify(orgKey)).statusCode).toBe(200);

    expect((await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}`, credential: sk() })).statusCode).toBe(200);
    expect((await verify(orgKey)).statusCode).toBe(401);
    expect(json(await t.call({ method: 'GET', url: `/v1/api-keys?subject=${org.id}`, credential: sk() })).data).toEqual([]);

    expect((await t.call({ method: 'DELETE', url: `/v1/users/${user.id}`, credential: sk() })).statusCode).toBe(200);
    expect((await verify(userKey)).statusCode).toBe(401);
    expect(json(await t.call({ method: 'GET', url: `/v1/api-keys?subject=${user.id}`, credential: sk() })).data).toEqual([]);
  });

  it("a banned user's keys answer like unknown ones until the ban is lifted", async () => {
    const user = await plainUser(t, undefined, 'banned');
    const { secret } = json(
      await t.call({ method: 'POST', url: '/v1/api-keys', credential: sk(), payload: { subject: user.id, name: 'b' } }),
    );
    expect((await verify(secret)).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `/v1/users/${user.id}/ban`, credential: sk() })).statusCode).toBe(200);
    expect((await verify(secret)).statusCode).toBe(401);
    expect((await t.call({ method: 'POST', url: `/v1/users/${user.id}/unban`, credential: sk() })).statusCode).toBe(200);
    expect((await verify(secret)).statusCode).toBe(200);
  });

  it('a member without org:manage cannot list the organization keys', async () => {
    const member = await person(t, undefined, 'plainmember');
    const org = await createOrg(t, owner.userId, { name: 'Members only' });
    await addMember(t, org.id, member.userId, 'member');
    await actAs(t, member, org.id);
    const listed = await t.call({ method: 'GET', url: '/v1/me/organization/api-keys', credential: member.accessToken });
    expect(listed.statusCode, listed.body).toBe(403);
  });
});
