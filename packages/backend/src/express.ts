import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticateRequest, type AuthenticateRequestOptions, type RequestAuth, type SignedInAuth } from './authenticate-request.js';
import { unauthenticatedBody, wwwAuthenticate } from './refusal.js';

/**
 * Express (4 and 5) and plain node middleware. No import of express itself: the middleware only
 * uses node's request and response, so this works with any version and adds no dependency.
 */

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by gatehouse() or requireAuth(options). */
      auth?: RequestAuth;
    }
  }
}

type Next = (error?: unknown) => void;
type AuthedRequest = IncomingMessage & { auth?: RequestAuth };
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

/** Authenticates every request and sets `req.auth`; never refuses (use requireAuth() for that). */
export function gatehouse(options: AuthenticateRequestOptions): Middleware {
  return (req, _res, next) => {
    authenticateRequest(req, options).then((auth) => {
      (req as AuthedRequest).auth = auth;
      next();
    }, next);
  };
}

/**
 * Refuses a request that is not signed in with 401 in Gatehouse's error shape. After gatehouse(),
 * call it without options; on its own, pass the options and it authenticates too.
 */
export function requireAuth(options?: AuthenticateRequestOptions): Middleware {
  return (req, res, next) => {
    const known = (req as AuthedRequest).auth;
    const pending: Promise<RequestAuth> = known
      ? Promise.resolve(known)
      : options
        ? authenticateRequest(req, options)
        : Promise.reject(new Error('requireAuth() without options needs app.use(gatehouse(options)) before it.'));
    pending.then((auth) => {
      (req as AuthedRequest).auth = auth;
      if (auth.isSignedIn) return next();
      res.statusCode = 401;
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('www-authenticate', wwwAuthenticate(auth));
      res.end(JSON.stringify(unauthenticatedBody(auth)));
    }, next);
  };
}

/** The request's auth; after requireAuth() it is signed in. */
export function getAuth(req: IncomingMessage): RequestAuth | undefined {
  return (req as AuthedRequest).auth;
}

export type { AuthenticateRequestOptions, RequestAuth, SignedInAuth };
