import type { Context, MiddlewareHandler } from 'hono';
import { authenticateRequest, type AuthenticateRequestOptions, type RequestAuth, type SignedInAuth } from './authenticate-request.js';
import { unauthenticatedBody, wwwAuthenticate } from './refusal.js';

/** Hono, on any runtime with node:crypto. Only types come from hono: no runtime dependency. */

export type GatehouseVariables = { auth: RequestAuth };
export type GatehouseEnv = { Variables: GatehouseVariables };

/** Authenticates every request and sets `c.get('auth')`; never refuses (use requireAuth() for that). */
export function gatehouse(options: AuthenticateRequestOptions): MiddlewareHandler<GatehouseEnv> {
  return async (c, next) => {
    c.set('auth', await authenticateRequest(c.req.raw, options));
    await next();
  };
}

/**
 * Answers 401 in Gatehouse's error shape unless the request is signed in. After gatehouse(), call it
 * without options; on its own, pass the options and it authenticates too.
 */
export function requireAuth(options?: AuthenticateRequestOptions): MiddlewareHandler<GatehouseEnv> {
  return async (c, next) => {
    let auth = c.get('auth') as RequestAuth | undefined;
    if (!auth) {
      if (!options) throw new Error('requireAuth() without options needs app.use(gatehouse(options)) before it.');
      auth = await authenticateRequest(c.req.raw, options);
      c.set('auth', auth);
    }
    if (!auth.isSignedIn) {
      c.header('www-authenticate', wwwAuthenticate(auth));
      return c.json(unauthenticatedBody(auth), 401);
    }
    await next();
  };
}

/** The request's auth, as gatehouse() or requireAuth() set it. */
export function getAuth(c: Context): RequestAuth | undefined {
  return c.get('auth') as RequestAuth | undefined;
}

export type { AuthenticateRequestOptions, RequestAuth, SignedInAuth };
