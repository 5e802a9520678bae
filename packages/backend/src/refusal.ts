import type { ErrorBody } from '@gatehouse/contract';
import type { SignedOutAuth } from './authenticate-request.js';

/**
 * What the adapters' `requireAuth()` answers: 401 in Gatehouse's own error shape, with the reason
 * in `details`, so an application's API refuses exactly as Gatehouse's does.
 */
export function unauthenticatedBody(auth: SignedOutAuth): ErrorBody {
  return { error: { code: 'unauthenticated', message: auth.message, details: { reason: auth.reason } } };
}

/** The `WWW-Authenticate` header of a refused request (RFC 6750). */
export function wwwAuthenticate(auth: SignedOutAuth): string {
  return auth.reason === 'token-missing' ? 'Bearer' : 'Bearer error="invalid_token"';
}

/**
 * The 401 for fetch runtimes (Next.js route handlers and middleware, Workers, Deno, Bun), in
 * Gatehouse's error shape.
 */
export function unauthenticatedResponse(auth: SignedOutAuth): Response {
  return new Response(JSON.stringify(unauthenticatedBody(auth)), {
    status: 401,
    headers: { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': wwwAuthenticate(auth) },
  });
}
