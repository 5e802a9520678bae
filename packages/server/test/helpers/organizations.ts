import { expect } from 'vitest';
import type { TestApp, TestEnvironment } from './app.js';
import { json, signUp, uniqueEmail } from './identity.js';

/** A signed-in person whose tokens follow switches (switchTo updates them in place). */
export interface Person {
  userId: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

/** Signs a new user up: one password hash. Use `plainUser` for users who never act themselves. */
export async function person(t: TestApp, environment?: TestEnvironment, tag = 'member'): Promise<Person> {
  const signed = await signUp(t, { email: uniqueEmail(tag), ...(environment ? { environment } : {}) });
  return { userId: signed.userId, email: signed.email, accessToken: signed.accessToken, refreshToken: signed.refreshToken };
}

/** A user created by the backend without a password: no hashing. */
export async function plainUser(t: TestApp, environment?: TestEnvironment, tag = 'plain'): Promise<{ id: string; email: string }> {
  const response = await t.call({
    method: 'POST',
    url: '/v1/users',
    credential: (environment ?? t.project.development).secretKey,
    payload: { email: uniqueEmail(tag), firstName: tag },
  });
  expect(response.statusCode, response.body).toBe(201);
  return json(response);
}

export async function createOrg(
  t: TestApp,
  ownerId: string,
  options: { name?: string; slug?: string; environment?: TestEnvironment } = {},
): Promise<{ id: string; name: string; slug: string; imageUrl: string | null }> {
  const response = await t.call({
    method: 'POST',
    url: '/v1/organizations',
    credential: (options.environment ?? t.project.development).secretKey,
    payload: { name: options.name ?? 'Acme', ownerId, ...(options.slug ? { slug: options.slug } : {}) },
  });
  expect(response.statusCode, response.body).toBe(201);
  return json(response);
}

export async function addMember(t: TestApp, organizationId: string, userId: string, role = 'member', environment?: TestEnvironment) {
  const response = await t.call({
    method: 'POST',
    url: `/v1/organizations/${organizationId}/members`,
    credential: (environment ?? t.project.development).secretKey,
    payload: { userId, role },
  });
  expect(response.statusCode, response.body).toBe(201);
  return json(response);
}

/** POST /v1/auth/switch-organization; on success the person's tokens are replaced. */
export async function switchTo(t: TestApp, who: Person, organizationId: string | null, environment?: TestEnvironment) {
  const response = await t.call({
    method: 'POST',
    url: '/v1/auth/switch-organization',
    credential: (environment ?? t.project.development).publishableKey,
    payload: { refreshToken: who.refreshToken, organizationId },
  });
  if (response.statusCode === 200) {
    const { session } = json(response);
    who.accessToken = session.accessToken;
    who.refreshToken = session.refreshToken;
  }
  return response;
}

/** Switches and insists it worked. */
export async function actAs(t: TestApp, who: Person, organizationId: string | null, environment?: TestEnvironment) {
  const response = await switchTo(t, who, organizationId, environment);
  expect(response.statusCode, response.body).toBe(200);
  return who;
}

/** The roles of an organization's members, by user id, read through the admin surface. */
export async function rolesOf(t: TestApp, organizationId: string, environment?: TestEnvironment): Promise<Record<string, string>> {
  const response = await t.call({
    method: 'GET',
    url: `/v1/organizations/${organizationId}/members?limit=100`,
    credential: (environment ?? t.project.development).secretKey,
  });
  expect(response.statusCode, response.body).toBe(200);
  return Object.fromEntries(json(response).data.map((m: { userId: string; role: string }) => [m.userId, m.role]));
}
