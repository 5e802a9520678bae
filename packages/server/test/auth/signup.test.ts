import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, me, uniqueEmail } from '../helpers/identity.js';

describe('POST /v1/auth/signup', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const signup = (payload: Record<string, unknown>, credential = t.project.development.publishableKey) =>
    t.call({ method: 'POST', url: '/v1/auth/signup', credential, payload });

  it('creates a user and signs them in', async () => {
    const email = uniqueEmail('new');
    const response = await signup({
      email: `  ${email.replace('example.test', 'Example.TEST')} `,
      password: GOOD_PASSWORD,
      firstName: 'Ada',
    });
    expect(response.statusCode).toBe(201);
    const body = json(response);
    expect(Object.keys(body).sort()).toEqual(['session', 'user']);
    expect(body.user).toEqual({ id: expect.stringMatching(/^user_/), email });
    expect(body.session).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^rt_/),
      expiresIn: 300,
      tokenType: 'Bearer',
    });
    const { header, payload } = decodeJwt(body.session.accessToken);
    expect(header).toEqual({ alg: 'RS256', kid: expect.stringMatching(/^key_/), typ: 'at+jwt' });
    expect(payload.sub).toBe(body.user.id);
    expect(payload.iss).toBe(`http://gatehouse.test/v1/environments/${t.project.development.id}`);

    const profile = json(await me(t, body.session.accessToken));
    expect(profile.user).toMatchObject({ id: body.user.id, email, firstName: 'Ada', lastName: null, username: null, imageUrl: null });
    expect(profile.organizations).toEqual([]);
    expect(profile.organization).toBeNull();
  });

  it('refuses a second account with the same normalized email: 409', async () => {
    const email = uniqueEmail('dup');
    expect((await signup({ email, password: GOOD_PASSWORD })).statusCode).toBe(201);
    const again = await signup({ email: email.replace('example.test', 'EXAMPLE.test'), password: GOOD_PASSWORD });
    expect(again.statusCode).toBe(409);
    expect(json(again).error.code).toBe('conflict');
  });

  it('keeps the case of the local part', async () => {
    const response = await signup({ email: `MixedCase.${Date.now()}@Example.Test`, password: GOOD_PASSWORD });
    expect(response.statusCode).toBe(201);
    expect(json(response).user.email).toMatch(/^MixedCase\.\d+@example\.test$/);
  });

  it.each([
    ['a display name', 'Ada <ada@example.test>'],
    ['an address list', 'ada@example.test, bob@example.test'],
    ['a quoted local part', '"ada lovelace"@example.test'],
    ['inner whitespace', 'ada lovelace@example.test'],
    ['a control character', 'ada\u0001@example.test'],
    ['no domain', 'ada@'],
    ['two @', 'ada@b@example.test'],
    ['a leading dot', '.ada@example.test'],
  ])('refuses an email with %s: 400', async (_what, email) => {
    const response = await signup({ email, password: GOOD_PASSWORD });
    expect(response.statusCode).toBe(400);
    expect(json(response).error).toMatchObject({ code: 'invalid_request', details: { fields: ['email'] } });
  });

  it('refuses short and common passwords with 422 weak_password', async () => {
    const short = await signup({ email: uniqueEmail(), password: 'Ab3$xyz' });
    expect(short.statusCode).toBe(422);
    expect(json(short).error.code).toBe('weak_password');
    expect(json(short).error.message).toMatch(/at least 8/);

    for (const password of ['password1', 'Baseball1', 'qwertyuiop', 'iloveyou']) {
      const common = await signup({ email: uniqueEmail(), password });
      expect(common.statusCode, password).toBe(422);
      expect(json(common).error.code).toBe('weak_password');
      expect(json(common).error.message).toMatch(/most common passwords/);
    }
  });

  it('accepts a 128-character password and keeps every character (no truncation, no case folding)', async () => {
    const long = 'Zq9!'.repeat(32);
    const email = uniqueEmail('long');
    expect((await signup({ email, password: long })).statusCode).toBe(201);
    const signin = (password: string) =>
      t.call({ method: 'POST', url: '/v1/auth/signin', credential: t.project.development.publishableKey, payload: { email, password } });
    expect((await signin(long)).statusCode).toBe(200);
    expect((await signin(long.slice(0, 127))).statusCode).toBe(401);
    expect((await signin(long.toLowerCase())).statusCode).toBe(401);
  });

  it('refuses a password over 1024 characters with 400', async () => {
    const response = await signup({ email: uniqueEmail(), password: 'x'.repeat(1025) });
    expect(response.statusCode).toBe(400);
  });

  it('refuses unknown fields and wrong types with 400, never coercing', async () => {
    expect((await signup({ email: uniqueEmail(), password: GOOD_PASSWORD, admin: true })).statusCode).toBe(400);
    expect((await signup({ email: uniqueEmail(), password: 12345678 })).statusCode).toBe(400);
  });

  it('is 403 method_disabled when sign-up or password auth is off', async () => {
    const project = await t.createProject('toggles');
    await t.setSettings(project.development.id, { signUp: false });
    const off = await signup({ email: uniqueEmail(), password: GOOD_PASSWORD }, project.development.publishableKey);
    expect(off.statusCode).toBe(403);
    expect(json(off).error).toMatchObject({ code: 'method_disabled', message: expect.stringMatching(/Sign-up is disabled/) });

    await t.setSettings(project.development.id, { signUp: true, authMethods: { password: false } });
    const noPassword = await signup({ email: uniqueEmail(), password: GOOD_PASSWORD }, project.development.publishableKey);
    expect(noPassword.statusCode).toBe(403);
    expect(json(noPassword).error.code).toBe('method_disabled');
  });

  it('needs a publishable key', async () => {
    const response = await signup({ email: uniqueEmail(), password: GOOD_PASSWORD }, t.project.development.secretKey);
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('credential_not_accepted');
  });
});
