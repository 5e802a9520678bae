import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, me } from '../helpers/identity.js';
import { person, type Person } from '../helpers/organizations.js';

/** Attacks on machines: a guessed secret, a replayed secret after rotation, a machine token as a user's. */
describe('machines security', { timeout: 30_000 }, () => {
  let t: TestApp;
  let user: Person;
  let machineId: string;
  let clientSecret: string;
  beforeAll(async () => {
    t = await startTestApp();
    user = await person(t, undefined, 'human');
    const created = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/machines`,
      credential: t.platformKey,
      payload: { name: 'cron', scopes: ['jobs:run'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    ({ clientSecret } = json(created));
    machineId = json(created).machine.id;
  }, 60_000);
  afterAll(() => t.close());

  const token = (client_id: string, client_secret: string) =>
    t.call({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id, client_secret } });

  it('a guessed secret gets the same 401 as an unknown client, in the error shape', async () => {
    const nearly = clientSecret.slice(0, -1) + (clientSecret.endsWith('A') ? 'B' : 'A');
    const answers = [
      await token(machineId, nearly),
      await token(machineId, ''),
      await token(machineId, `gh_mch_${'A'.repeat(43)}`),
      await token('mch_01doesnotexist0000000000', clientSecret),
      await token('user_01notamachine', clientSecret),
    ];
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(401);
      expect(json(answer).error.code).toBe('unauthenticated');
      expect(answer.body).toBe(answers[0]!.body);
    }
    expect((await token(machineId, clientSecret)).statusCode).toBe(200);
  });

  it('a secret replayed after rotation is refused at once; tokens already issued live out their time', async () => {
    const before = json(await token(machineId, clientSecret)).access_token as string;
    const rotated = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/machines/${machineId}/secret`,
      credential: t.platformKey,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const replayed = await token(machineId, clientSecret);
    expect(replayed.statusCode).toBe(401);
    clientSecret = json(rotated).clientSecret;
    expect((await token(machineId, clientSecret)).statusCode).toBe(200);
    expect(decodeJwt(before).payload.sub).toBe(machineId);
  });

  it("a machine token is refused wherever a user's token is expected", async () => {
    const issued = json(await token(machineId, clientSecret)).access_token as string;
    expect(decodeJwt(issued).header.typ).toBe('m2m+jwt');
    for (const [method, url] of [
      ['GET', '/v1/me'],
      ['GET', '/v1/me/sessions'],
      ['GET', '/v1/me/api-keys'],
      ['POST', '/v1/me/api-keys'],
      ['GET', '/v1/me/organizations'],
      ['GET', '/v1/me/organization'],
    ] as const) {
      const response = await t.call({ method, url, credential: issued, ...(method === 'POST' ? { payload: { name: 'x' } } : {}) });
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(401);
      expect(json(response).error.message).toMatch(/machine token/);
    }
    // Nor is it an operator's token on the platform surface.
    const platform = await t.call({ method: 'GET', url: '/v1/platform/projects', credential: issued });
    expect([401, 403]).toContain(platform.statusCode);
    // The user's own token, on the same keys, passes.
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
  });

  it("a machine of another environment: that environment's keys cannot list, delete or rotate it", async () => {
    const other = await t.createProject('Other machines');
    const sk = other.development.secretKey;
    expect(json(await t.call({ method: 'GET', url: '/v1/machines', credential: sk })).data).toEqual([]);
    expect((await t.call({ method: 'DELETE', url: `/v1/machines/${machineId}`, credential: sk })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `/v1/machines/${machineId}/secret`, credential: sk })).statusCode).toBe(404);
    const platformOther = await t.call({
      method: 'DELETE',
      url: `/v1/platform/environments/${other.development.id}/machines/${machineId}`,
      credential: t.platformKey,
    });
    expect(platformOther.statusCode).toBe(404);
    expect((await token(machineId, clientSecret)).statusCode).toBe(200);
  });

  it('a session token is not a client secret, nor a machine id', async () => {
    for (const [id, secret] of [
      [machineId, user.accessToken],
      [machineId, user.refreshToken],
      [user.userId, user.refreshToken],
    ] as const) {
      const response = await token(id, secret);
      expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400);
      expect(response.statusCode).toBeLessThan(500);
    }
  });
});
