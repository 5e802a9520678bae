import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, me, signUp, type SignedIn } from '../helpers/identity.js';
import { FIXTURE_SIZE, makePng } from '../helpers/images.js';
import { uploadThroughApi } from '../helpers/uploads.js';

describe('GET and PATCH /v1/me', () => {
  let t: TestApp;
  let user: SignedIn;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signUp(t, { extra: { firstName: 'Ada', lastName: 'Lovelace' } });
  });
  afterAll(() => t.close());

  const patch = (payload: unknown, token = user.accessToken) =>
    t.call({ method: 'PATCH', url: '/v1/me', credential: token, payload: payload as Record<string, unknown> });

  it('returns the user, their organizations and the current organization', async () => {
    const response = await me(t, user.accessToken);
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({
      user: {
        id: user.userId,
        email: user.email,
        firstName: 'Ada',
        lastName: 'Lovelace',
        username: null,
        imageUrl: null,
        passwordEnabled: true,
        emailVerified: false,
        banned: false,
        publicMetadata: {},
        unsafeMetadata: {},
        externalId: null,
        twoFactorEnabled: false,
        lastSignInAt: expect.any(Number),
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      },
      organizations: [],
      organization: null,
    });
  });

  it('changes only the fields sent; null removes the picture', async () => {
    const set = await patch({ imageUrl: 'https://cdn.example.test/ada.png', username: 'ada_l' });
    expect(set.statusCode).toBe(200);
    expect(json(set)).toMatchObject({
      firstName: 'Ada',
      lastName: 'Lovelace',
      username: 'ada_l',
      imageUrl: 'https://cdn.example.test/ada.png',
    });

    const renamed = await patch({ firstName: 'Augusta' });
    expect(json(renamed)).toMatchObject({
      firstName: 'Augusta',
      lastName: 'Lovelace',
      username: 'ada_l',
      imageUrl: 'https://cdn.example.test/ada.png',
    });

    const removed = await patch({ imageUrl: null });
    expect(json(removed)).toMatchObject({ firstName: 'Augusta', imageUrl: null, username: 'ada_l' });
    expect(json(await me(t, user.accessToken)).user.imageUrl).toBeNull();
  });

  it.each([
    ['http', 'http://cdn.example.test/a.png'],
    ['javascript', 'javascript:alert(1)'],
    ['data', 'data:image/png;base64,AAAA'],
    ['relative', '/a.png'],
    ['credentials', 'https://user:pass@cdn.example.test/a.png'],
  ])('refuses a non-https imageUrl (%s) with 400', async (_kind, imageUrl) => {
    const response = await patch({ imageUrl });
    expect(response.statusCode).toBe(400);
    expect(json(response).error).toMatchObject({ code: 'invalid_request', details: { fields: ['imageUrl'] } });
  });

  it("refuses this instance's own upload over plain http when the instance is not on a loopback host", async () => {
    // The test instance's asset URLs are http://gatehouse.test/…: only loopback hosts get the exception.
    const { publicUrl } = await uploadThroughApi(t, user.accessToken, makePng(5, 3, { seed: 77 }), 'image/png', FIXTURE_SIZE);
    expect(publicUrl.startsWith('http://gatehouse.test/')).toBe(true);
    const response = await patch({ imageUrl: publicUrl });
    expect(response.statusCode).toBe(400);
    expect(json(response).error).toMatchObject({ code: 'invalid_request', details: { fields: ['imageUrl'] } });
    expect(json(response).error.message).toMatch(/https/);
  });

  it('keeps usernames unique per environment, whatever their case: 409', async () => {
    const other = await signUp(t);
    expect((await patch({ username: 'grace_h' }, other.accessToken)).statusCode).toBe(200);
    const taken = await patch({ username: 'Grace_H' });
    expect(taken.statusCode).toBe(409);
    expect(json(taken).error).toMatchObject({ code: 'conflict', details: { fields: ['username'] } });
    // Another environment may use it.
    const elsewhere = await signUp(t, { environment: t.project.production });
    expect((await patch({ username: 'grace_h' }, elsewhere.accessToken)).statusCode).toBe(200);
  });

  it('refuses an invalid username, unknown fields and wrong types with 400', async () => {
    expect((await patch({ username: 'a b' })).statusCode).toBe(400);
    expect((await patch({ username: 'x' })).statusCode).toBe(400);
    expect((await patch({ email: 'new@example.test' })).statusCode).toBe(400);
    expect((await patch({ firstName: 42 })).statusCode).toBe(400);
  });

  it('needs an access token', async () => {
    expect((await t.call({ method: 'GET', url: '/v1/me' })).statusCode).toBe(401);
    const sk = await t.call({ method: 'GET', url: '/v1/me', credential: t.project.development.secretKey });
    expect(sk.statusCode).toBe(403);
  });
});

describe('DELETE /v1/me', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const remove = (token: string) => t.call({ method: 'DELETE', url: '/v1/me', credential: token });

  it('deletes the account from a fresh session (a sign-in is a verification) and ends its sessions', async () => {
    const user = await signUp(t);
    const deleted = await remove(user.accessToken);
    expect(deleted.statusCode).toBe(200);
    expect(json(deleted)).toEqual({ id: user.userId, deleted: true });
    expect((await me(t, user.accessToken)).statusCode).toBe(401);
    const admin = await t.call({ method: 'GET', url: `/v1/users/${user.userId}`, credential: t.project.development.secretKey });
    expect(admin.statusCode).toBe(404);
  });

  it('refuses the last owner of an organization, like the admin deletion', async () => {
    const user = await signUp(t);
    const org = await t.call({
      method: 'POST',
      url: '/v1/organizations',
      credential: t.project.development.secretKey,
      payload: { name: 'Solo', ownerId: user.userId },
    });
    expect(org.statusCode).toBe(201);
    const refused = await remove(user.accessToken);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('forbidden');
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
  });
});
