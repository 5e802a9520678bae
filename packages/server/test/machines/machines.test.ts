import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, json } from '../helpers/identity.js';

describe('machines and client credentials', { timeout: 30_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  const machines = (path = '') => `/v1/platform/environments/${env().id}/machines${path}`;
  async function newMachine(scopes = ['reports:read', 'reports:write']) {
    const response = await t.call({ method: 'POST', url: machines(), credential: t.platformKey, payload: { name: 'worker', scopes } });
    expect(response.statusCode, response.body).toBe(201);
    return json<{ machine: { id: string; name: string; scopes: string[]; createdAt: number }; clientSecret: string }>(response);
  }
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    t.call({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
    });

  it('creates, lists and deletes machines; the secret is shown once', async () => {
    const { machine, clientSecret } = await newMachine();
    expect(machine).toEqual({
      id: expect.stringMatching(/^mch_/),
      name: 'worker',
      scopes: ['reports:read', 'reports:write'],
      createdAt: expect.any(Number),
    });
    expect(clientSecret).toMatch(/^gh_mch_[A-Za-z0-9_-]{43}$/);
    const listed = json(await t.call({ method: 'GET', url: machines(), credential: t.platformKey })).data;
    expect(listed).toContainEqual(machine);
    expect(JSON.stringify(listed)).not.toContain(clientSecret);
    expect((await t.call({ method: 'DELETE', url: machines(`/${machine.id}`), credential: t.platformKey })).statusCode).toBe(200);
    expect((await form({ grant_type: 'client_credentials', client_id: machine.id, client_secret: clientSecret })).statusCode).toBe(401);
    expect((await t.call({ method: 'DELETE', url: machines(`/${machine.id}`), credential: t.platformKey })).statusCode).toBe(404);
  });

  it('issues an m2m+jwt signed by the environment, with HTTP Basic and a form body', async () => {
    const { machine, clientSecret } = await newMachine();
    await t.setSettings(env().id, { accessTokenTtlSeconds: 120 });
    const response = await form({ grant_type: 'client_credentials' }, { authorization: basic(machine.id, clientSecret) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['cache-control']).toContain('no-store');
    const body = json(response);
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 120, scope: 'reports:read reports:write' });
    const { header, payload } = decodeJwt(body.access_token);
    expect(header.typ).toBe('m2m+jwt');
    expect(payload).toMatchObject({ iss: `${BASE_URL}/v1/environments/${env().id}`, sub: machine.id, scope: 'reports:read reports:write' });
    expect(payload.exp - payload.iat).toBe(120);
    expect(payload.sid).toBeUndefined();

    // Signed by a key the environment publishes.
    const jwks = json(await t.call({ method: 'GET', url: `/v1/environments/${env().id}/.well-known/jwks.json` })).keys;
    const jwk = jwks.find((k: { kid: string }) => k.kid === header.kid);
    const [h, p, s] = body.access_token.split('.');
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    const data = Buffer.from(`${h}.${p}`);
    const signature = Buffer.from(s, 'base64url');
    const ok =
      header.alg === 'ES256'
        ? verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature)
        : verify(header.alg === 'EdDSA' ? null : 'sha256', data, key, signature);
    expect(ok).toBe(true);
  });

  it('takes JSON with client_id and client_secret in the body, and a narrower scope', async () => {
    const { machine, clientSecret } = await newMachine();
    const response = await t.call({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: machine.id, client_secret: clientSecret, scope: 'reports:read' },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response).scope).toBe('reports:read');
    expect(decodeJwt(json(response).access_token).payload.scope).toBe('reports:read');
  });

  it('refuses a scope the machine does not hold, another grant type, and two ways of authenticating', async () => {
    const { machine, clientSecret } = await newMachine();
    const wider = await form({
      grant_type: 'client_credentials',
      client_id: machine.id,
      client_secret: clientSecret,
      scope: 'reports:read admin',
    });
    expect(wider.statusCode, wider.body).toBe(400);
    expect(json(wider).error.code).toBe('invalid_request');
    const password = await form({ grant_type: 'password', client_id: machine.id, client_secret: clientSecret });
    expect(password.statusCode).toBe(400);
    expect(json(password).error.code).toBe('invalid_request');
    const both = await form(
      { grant_type: 'client_credentials', client_secret: clientSecret },
      { authorization: basic(machine.id, clientSecret) },
    );
    expect(both.statusCode).toBe(400);
    const none = await form({ grant_type: 'client_credentials' });
    expect(none.statusCode).toBe(401);
    expect((await form({ client_id: machine.id })).statusCode).toBe(400);
  });

  it('rotating the secret stops the old one at once', async () => {
    const { machine, clientSecret: old } = await newMachine();
    const rotated = await t.call({ method: 'POST', url: machines(`/${machine.id}/secret`), credential: t.platformKey });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const { clientSecret: fresh } = json(rotated);
    expect(fresh).not.toBe(old);
    expect((await form({ grant_type: 'client_credentials', client_id: machine.id, client_secret: old })).statusCode).toBe(401);
    expect((await form({ grant_type: 'client_credentials', client_id: machine.id, client_secret: fresh })).statusCode).toBe(200);
  });

  it('is in the OpenAPI document', async () => {
    const document = json(await t.call({ method: 'GET', url: '/v1/openapi.json' }));
    expect(document.paths['/v1/oauth/token'].post.requestBody.content).toHaveProperty('application/x-www-form-urlencoded');
    expect(document.paths['/v1/platform/environments/{environmentId}/machines']).toBeDefined();
    expect(document.paths['/v1/api-keys/verify'].post).toBeDefined();
  });
});
