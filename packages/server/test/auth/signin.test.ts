import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, me, signIn, signUp, type SignedIn } from '../helpers/identity.js';

describe('POST /v1/auth/signin', () => {
  let t: TestApp;
  let user: SignedIn;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signUp(t);
  });
  afterAll(() => t.close());

  it('signs in with the right password and answers the documented shape', async () => {
    const response = await signIn(t, user.email, GOOD_PASSWORD);
    expect(response.statusCode).toBe(200);
    const body = json(response);
    expect(body).toEqual({
      user: { id: user.userId, email: user.email },
      session: { accessToken: expect.any(String), refreshToken: expect.stringMatching(/^rt_/), expiresIn: 300, tokenType: 'Bearer' },
    });
    expect(body.session.refreshToken).not.toBe(user.refreshToken);
    const { payload } = decodeJwt(body.session.accessToken);
    expect(Object.keys(payload).sort()).toEqual(['amr', 'exp', 'fva', 'iat', 'iss', 'jti', 'nbf', 'sid', 'sub']);
    expect([payload.amr, payload.fva]).toEqual([['pwd'], [0, -1]]);
    expect(payload.exp - payload.iat).toBe(300);
    expect(payload.nbf).toBe(payload.iat);
    expect((await me(t, body.session.accessToken)).statusCode).toBe(200);
  });

  it('accepts the email with surrounding spaces and an upper-case domain', async () => {
    const [local, domain] = user.email.split('@');
    const response = await signIn(t, ` ${local}@${domain!.toUpperCase()} `, GOOD_PASSWORD);
    expect(response.statusCode).toBe(200);
  });

  it('refuses a wrong password with 401 invalid_credentials', async () => {
    const response = await signIn(t, user.email, `${GOOD_PASSWORD}!`);
    expect(response.statusCode).toBe(401);
    expect(json(response).error).toEqual({ code: 'invalid_credentials', message: 'The email or password is incorrect.' });
  });

  it('puts the request Origin in azp, and the configured lifetime in exp and expiresIn', async () => {
    const project = await t.createProject('azp', 'azp.test');
    await t.setSettings(project.production.id, { accessTokenTtlSeconds: 900 });
    const signedUp = await signUp(t, { environment: project.production, headers: { origin: 'https://app.azp.test' } });
    const { payload } = decodeJwt(signedUp.accessToken);
    expect(payload.azp).toBe('https://app.azp.test');
    expect(signedUp.expiresIn).toBe(900);
    expect(payload.exp - payload.iat).toBe(900);
  });

  it('is 403 method_disabled when password sign-in is off', async () => {
    const project = await t.createProject('off');
    await t.setSettings(project.development.id, { authMethods: { password: false } });
    const response = await signIn(t, user.email, GOOD_PASSWORD, project.development);
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('method_disabled');
  });

  it('does not find a user of another environment', async () => {
    const response = await signIn(t, user.email, GOOD_PASSWORD, t.project.production);
    expect(response.statusCode).toBe(401);
    expect(json(response).error.code).toBe('invalid_credentials');
  });

  it('refuses a missing field with 400', async () => {
    const response = await t.call({
      method: 'POST',
      url: '/v1/auth/signin',
      credential: t.project.development.publishableKey,
      payload: { email: user.email },
    });
    expect(response.statusCode).toBe(400);
    expect(json(response).error).toMatchObject({ code: 'invalid_request', details: { fields: ['password'] } });
  });
});
