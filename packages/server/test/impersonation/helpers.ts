import { expect } from 'vitest';
import type { TestApp, TestEnvironment } from '../helpers/app.js';
import { json } from '../helpers/identity.js';

export function mint(t: TestApp, payload: Record<string, unknown>, environment: TestEnvironment = t.project.development) {
  return t.call({ method: 'POST', url: '/v1/actor-tokens', credential: environment.secretKey, payload });
}

/** A fresh actor token for `userId`, acted by `sub`. */
export async function actorToken(t: TestApp, userId: string, sub = 'support:ada', environment?: TestEnvironment) {
  const response = await mint(t, { userId, actor: { sub } }, environment);
  expect(response.statusCode, response.body).toBe(201);
  return json<{ id: string; token: string; url: string; expiresAt: number }>(response);
}

export function redeem(t: TestApp, token: string, environment: TestEnvironment = t.project.development) {
  return t.call({ method: 'POST', url: '/v1/auth/actor-token', credential: environment.publishableKey, payload: { token } });
}

/** An impersonated session of `userId`. */
export async function actorSession(t: TestApp, userId: string, sub = 'support:ada') {
  const { token } = await actorToken(t, userId, sub);
  const response = await redeem(t, token);
  expect(response.statusCode, response.body).toBe(200);
  return json<{ user: { id: string }; session: { accessToken: string; refreshToken: string } }>(response).session;
}
