import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, TestEnvironment } from './app.js';

/** A password that passes the policy; tests reuse it to keep argon2 work low. */
export const GOOD_PASSWORD = 'correct horse battery staple';

export interface SignedIn {
  userId: string;
  email: string;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

let counter = 0;
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}.${counter}.${Date.now().toString(36)}@example.test`;
}

export function json<T = any>(response: LightMyRequestResponse): T {
  return response.json() as T;
}

export async function signUp(
  t: TestApp,
  options: {
    environment?: TestEnvironment;
    email?: string;
    password?: string;
    extra?: Record<string, unknown>;
    headers?: Record<string, string>;
  } = {},
): Promise<SignedIn> {
  const environment = options.environment ?? t.project.development;
  const email = options.email ?? uniqueEmail();
  const response = await t.call({
    method: 'POST',
    url: '/v1/auth/signup',
    credential: environment.publishableKey,
    payload: { email, password: options.password ?? GOOD_PASSWORD, ...options.extra },
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (response.statusCode !== 201) throw new Error(`sign-up failed: ${response.statusCode} ${response.body}`);
  const body = json(response);
  return {
    userId: body.user.id,
    email: body.user.email,
    accessToken: body.session.accessToken,
    refreshToken: body.session.refreshToken,
    expiresIn: body.session.expiresIn,
  };
}

export function signIn(t: TestApp, email: string, password: string, environment?: TestEnvironment) {
  return t.call({
    method: 'POST',
    url: '/v1/auth/signin',
    credential: (environment ?? t.project.development).publishableKey,
    payload: { email, password },
  });
}

export function refresh(t: TestApp, refreshToken: string, environment?: TestEnvironment) {
  return t.call({
    method: 'POST',
    url: '/v1/auth/refresh',
    credential: (environment ?? t.project.development).publishableKey,
    payload: { refreshToken },
  });
}

export function me(t: TestApp, accessToken: string) {
  return t.call({ method: 'GET', url: '/v1/me', credential: accessToken });
}

/** Decodes a JWT's header and payload without verifying it. */
export function decodeJwt(token: string): { header: Record<string, any>; payload: Record<string, any>; signature: string } {
  const [h, p, s] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')),
    signature: s!,
  };
}

export function b64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}
