import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/lib/errors.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

function expectErrorShape(body: unknown, code: string) {
  expect(body).toMatchObject({ error: { code, message: expect.any(String) } });
  const message = (body as { error: { message: string } }).error.message;
  expect(message.length).toBeGreaterThan(10);
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.(ts|js):\d+|stack|select |insert into|SQLITE|relation "/i);
}

describe('errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const patchEnvironment = (payload: string | Buffer, contentType = 'application/json') =>
    t.call({
      method: 'PATCH',
      url: `/v1/platform/environments/${t.project.development.id}`,
      credential: t.platformKey,
      headers: { 'content-type': contentType },
      payload,
    });

  it('maps every catalogue code to the status DESIGN.md gives it', () => {
    expect(ERROR_STATUS).toMatchObject({
      invalid_request: 400,
      unauthenticated: 401,
      invalid_credentials: 401,
      session_revoked: 401,
      credential_not_accepted: 403,
      origin_not_allowed: 403,
      forbidden: 403,
      method_disabled: 403,
      not_found: 404,
      conflict: 409,
      payload_too_large: 413,
      unsupported_media_type: 415,
      user_not_found: 422,
      unsupported_image_type: 422,
      image_too_large: 422,
      weak_password: 422,
      rate_limited: 429,
      internal: 500,
      // Answered by the HTTP layer before any route, with the status HTTP gives them.
      request_timeout: 408,
      uri_too_long: 414,
      headers_too_large: 431,
      unavailable: 503,
    });
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const res = await patchEnvironment('{"signUp": tru');
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'invalid_request');
    expect(res.json().error.message).toContain('not valid JSON');
  });

  it('answers a non-JSON content type with 415', async () => {
    const res = await patchEnvironment('signUp=true', 'application/x-www-form-urlencoded');
    expect(res.statusCode).toBe(415);
    expectErrorShape(res.json(), 'unsupported_media_type');
    const text = await patchEnvironment('hello', 'text/plain');
    expect(text.statusCode).toBe(415);
  });

  it('answers a field of the wrong type with 400 naming the field, and changes nothing', async () => {
    const res = await patchEnvironment(JSON.stringify({ signUp: 'yes' }));
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'invalid_request');
    expect(res.json().error.details.fields).toEqual(['signUp']);
    expect(res.json().error.message).toContain('signUp');
    const numeric = await patchEnvironment(JSON.stringify({ accessTokenTtlSeconds: '300' }));
    expect(numeric.statusCode).toBe(400);
    const env = await t.tenancy.getEnvironment(t.project.development.id);
    expect(env.settings.signUp).toBe(true);
  });

  it('answers an unknown field on a PATCH with 400 naming it, instead of dropping it', async () => {
    const res = await patchEnvironment(JSON.stringify({ signUp: false, singUp: true }));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.fields).toEqual(['singUp']);
    expect(res.json().error.message).toContain('unknown field');
    const env = await t.tenancy.getEnvironment(t.project.development.id);
    expect(env.settings.signUp).toBe(true);
  });

  it('answers a 10 MB body with 413 payload_too_large', async () => {
    const huge = JSON.stringify({ callbackOrigins: ['x'.repeat(10 * 1024 * 1024)] });
    const res = await patchEnvironment(huge);
    expect(res.statusCode).toBe(413);
    expectErrorShape(res.json(), 'payload_too_large');
    expect(res.json().error.message).toContain('(1 MiB)');
  });

  it('answers a JSON array where an object is expected with 400', async () => {
    const res = await patchEnvironment('[1,2]');
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'invalid_request');
  });

  it('answers an unknown route with 404 in the same shape', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expectErrorShape(res.json(), 'not_found');
    expect(res.json().error.message).toContain('/v1/openapi.json');
  });

  it('refuses NUL characters in paths, queries and bodies with 400, on every database', async () => {
    const inPath = await t.call({ method: 'GET', url: '/v1/platform/projects/proj_%00x', credential: t.platformKey });
    const inQuery = await t.call({ method: 'GET', url: '/v1/platform/projects?cursor=a%00b', credential: t.platformKey });
    const inBody = await t.call({
      method: 'POST',
      url: '/v1/platform/projects',
      credential: t.platformKey,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"evil\\u0000name"}',
    });
    for (const res of [inPath, inQuery, inBody]) {
      expect(res.statusCode).toBe(400);
      expectErrorShape(res.json(), 'invalid_request');
      expect(res.json().error.message).toContain('NUL');
    }
    // An escaped backslash followed by "u0000" is ordinary text.
    const literal = await t.call({
      method: 'POST',
      url: '/v1/platform/projects',
      credential: t.platformKey,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"literal \\\\u0000"}',
    });
    expect(literal.statusCode).toBe(201);
    expect(literal.json().name).toBe('literal \\u0000');
  });

  it('answers a bad query value with 400', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/platform/projects?limit=1000', credential: t.platformKey });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.fields).toEqual(['limit']);
  });
});

describe('internal errors', () => {
  it('never leak a stack trace or SQL', async () => {
    const t = await startTestApp();
    // Break the database under the running app: the next query fails inside the driver.
    await t.store.db.schema.dropTable('secret_keys').execute();
    const res = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/secret-keys`,
      credential: t.platformKey,
    });
    expect(res.statusCode).toBe(500);
    expectErrorShape(res.json(), 'internal');
    await t.close();
  });
});
