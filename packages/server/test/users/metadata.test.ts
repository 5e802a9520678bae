import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, me, signUp, uniqueEmail } from '../helpers/identity.js';

describe('user metadata', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const sk = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload ? { payload } : {}) });
  const patchMe = (accessToken: string, payload: object) => t.call({ method: 'PATCH', url: '/v1/me', credential: accessToken, payload });

  it('is set on POST /v1/users, replaced by PATCH, and shown by the SK API and webhooks', async () => {
    const created = await sk('POST', '/v1/users', {
      email: uniqueEmail('meta'),
      publicMetadata: { plan: 'pro', seats: 3 },
      privateMetadata: { stripeCustomerId: 'cus_123' },
      unsafeMetadata: { theme: 'dark' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(json(created)).toMatchObject({
      publicMetadata: { plan: 'pro', seats: 3 },
      privateMetadata: { stripeCustomerId: 'cus_123' },
      unsafeMetadata: { theme: 'dark' },
    });
    const replaced = await sk('PATCH', `/v1/users/${json(created).id}`, { publicMetadata: { plan: 'team' } });
    expect(json(replaced)).toMatchObject({ publicMetadata: { plan: 'team' }, privateMetadata: { stripeCustomerId: 'cus_123' } });
    const events = await t.store.db
      .selectFrom('webhook_events')
      .select('body')
      .where('environment_id', '=', t.project.development.id as never)
      .where('type', '=', 'user.updated')
      .execute();
    const last = events
      .map((e) => JSON.parse(e.body).data)
      .filter((d) => d.id === json(created).id)
      .at(-1);
    expect(last).toMatchObject({ publicMetadata: { plan: 'team' }, privateMetadata: { stripeCustomerId: 'cus_123' } });
  });

  it('PATCH /v1/users/{id}/metadata merges deeply; a null removes its key', async () => {
    const user = json(
      await sk('POST', '/v1/users', {
        email: uniqueEmail('merge'),
        publicMetadata: { plan: 'pro', limits: { seats: 3, projects: 10 }, legacy: true },
      }),
    );
    const merged = await sk('PATCH', `/v1/users/${user.id}/metadata`, {
      publicMetadata: { limits: { seats: 5 }, legacy: null, region: 'eu' },
      privateMetadata: { note: 'vip' },
    });
    expect(merged.statusCode, merged.body).toBe(200);
    expect(json(merged)).toMatchObject({
      publicMetadata: { plan: 'pro', limits: { seats: 5, projects: 10 }, region: 'eu' },
      privateMetadata: { note: 'vip' },
      unsafeMetadata: {},
    });
    expect(json(merged).publicMetadata).not.toHaveProperty('legacy');
    expect((await sk('PATCH', '/v1/users/user_missing/metadata', { publicMetadata: {} })).statusCode).toBe(404);
  });

  it('concurrent merges of different keys lose none', async () => {
    const user = json(await sk('POST', '/v1/users', { email: uniqueEmail('race') }));
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => sk('PATCH', `/v1/users/${user.id}/metadata`, { publicMetadata: { [`k${i}`]: i } })),
    );
    const read = json(await sk('GET', `/v1/users/${user.id}`));
    expect(Object.keys(read.publicMetadata).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
  });

  it('the user reads public and unsafe metadata, writes only unsafe, and never sees private', async () => {
    const user = await signUp(t);
    await sk('PATCH', `/v1/users/${user.userId}`, { publicMetadata: { role: 'beta' }, privateMetadata: { secret: 's3cr3t' } });
    const profile = json(await me(t, user.accessToken)).user;
    expect(profile).toMatchObject({ publicMetadata: { role: 'beta' }, unsafeMetadata: {} });
    expect(profile).not.toHaveProperty('privateMetadata');
    expect(JSON.stringify(profile)).not.toContain('s3cr3t');

    const updated = await patchMe(user.accessToken, { unsafeMetadata: { onboarded: true } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(json(updated)).toMatchObject({ unsafeMetadata: { onboarded: true }, publicMetadata: { role: 'beta' } });
    expect(json(updated)).not.toHaveProperty('privateMetadata');
    for (const field of ['publicMetadata', 'privateMetadata']) {
      const refused = await patchMe(user.accessToken, { [field]: { role: 'admin' } });
      expect(refused.statusCode, field).toBe(400);
    }
    expect(json(await sk('GET', `/v1/users/${user.userId}`)).publicMetadata).toEqual({ role: 'beta' });
  });

  it.each([
    ['an array', []],
    ['a string', 'plan=pro'],
    ['null', null],
    ['over 8 KiB', { blob: 'x'.repeat(8 * 1024) }],
    ['nested too deep', JSON.parse('{"a":'.repeat(20) + '1' + '}'.repeat(20))],
  ])('refuses %s with a 400 naming the field, and stores nothing', async (_what, value) => {
    const user = json(await sk('POST', '/v1/users', { email: uniqueEmail('bad'), publicMetadata: { kept: true } }));
    for (const [method, url] of [
      ['PATCH', `/v1/users/${user.id}`],
      ['PATCH', `/v1/users/${user.id}/metadata`],
    ] as const) {
      const res = await sk(method, url, { publicMetadata: value });
      expect(res.statusCode, `${url} ${res.body}`).toBe(400);
      expect(json(res).error.code).toBe('invalid_request');
      expect(JSON.stringify(json(res).error)).toContain('publicMetadata');
    }
    expect(json(await sk('GET', `/v1/users/${user.id}`)).publicMetadata).toEqual({ kept: true });
  });

  it('stack exhaustion: 200,000 nested arrays in unsafeMetadata are a 400, not a 500', async () => {
    const user = await signUp(t);
    const deep = `{"unsafeMetadata":{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    const refused = await t.call({
      method: 'PATCH',
      url: '/v1/me',
      credential: user.accessToken,
      headers: { 'content-type': 'application/json' },
      payload: deep,
    });
    expect(refused.statusCode, refused.body.slice(0, 300)).toBe(400);
    expect(json(refused).error).toMatchObject({ code: 'invalid_request', details: { fields: ['unsafeMetadata'] } });
  });

  it('8 KiB is measured in UTF-8 bytes of the JSON', async () => {
    // 2,800 three-byte characters: under 8,192 characters, over 8,192 bytes.
    const res = await sk('POST', '/v1/users', { email: uniqueEmail('utf8'), publicMetadata: { text: '€'.repeat(2800) } });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.message).toMatch(/bytes as JSON, over the 8192-byte limit/);
  });
});
