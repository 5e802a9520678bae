import type { HasCheck } from '@gatehouse/backend';
import { NextResponse, type NextFetchEvent, type NextRequest } from 'next/server';
import { safePath, signInRedirect, URL_HEADER, type ProtectOptions } from './auth.js';
import { authenticate, SESSION_COOKIE, type AuthObject, type SignedInAuthObject } from './authenticate.js';
import { resolveConfig, type GatehouseNextOptions } from './config.js';
import { interstitialResponse } from './interstitial.js';
import { factsOfRequest, isDocumentRequest } from './request.js';

export { createRouteMatcher } from './route-matcher.js';

/** What the middleware's handler gets: the request's auth, and protect() that ends the request early. */
export interface MiddlewareAuth {
  (): Promise<AuthObject>;
  protect(check?: HasCheck, options?: ProtectOptions): Promise<SignedInAuthObject>;
}

export type MiddlewareHandler = (
  auth: MiddlewareAuth,
  request: NextRequest,
  event: NextFetchEvent,
) => Response | undefined | void | Promise<Response | undefined | void>;

/** Thrown by protect() inside the handler; the middleware answers with its response. */
class ProtectAnswer {
  constructor(readonly response: Response) {}
}

/**
 * For `proxy.ts` (Node.js runtime) or `middleware.ts` (Edge runtime): reads the `__gh_session`
 * cookie or `Authorization: Bearer`, verifies it offline, and gives the handler `auth()` and
 * `auth.protect()`. A document request whose cookie holds an expired token gets the interstitial
 * refresh page; any other request with it is simply signed out.
 *
 * The middleware is a convenience, not the security boundary (it can be skipped by a matcher that
 * misses a route, or by a framework bug): `auth()` in pages, route handlers and server actions
 * verifies again on its own.
 */
export function gatehouseMiddleware(handler?: MiddlewareHandler, options: GatehouseNextOptions = {}) {
  return async function middleware(request: NextRequest, event: NextFetchEvent): Promise<Response> {
    const config = resolveConfig(options);
    const facts = factsOfRequest(request, SESSION_COOKIE);
    const result = await authenticate(facts, config);
    const document = isDocumentRequest(facts);
    if (
      !result.isSignedIn &&
      result.tokenSource === 'cookie' &&
      result.reason === 'token-expired' &&
      document &&
      config.publishableKey &&
      config.baseUrl
    ) {
      return interstitialResponse(config.publishableKey, config.baseUrl);
    }
    const url = request.nextUrl ?? new URL(request.url);
    const path = `${url.pathname}${url.search}`;
    const auth: MiddlewareAuth = Object.assign(async () => result, {
      async protect(check?: HasCheck, protectOptions: ProtectOptions = {}): Promise<SignedInAuthObject> {
        if (!result.isSignedIn) {
          if (document || request.headers.get('rsc') === '1') {
            // Only a same-origin path goes back: `//evil.example` is a path to the URL parser but a host to a browser.
            const target = signInRedirect(protectOptions.signInUrl ?? config.signInUrl, safePath(path));
            throw new ProtectAnswer(NextResponse.redirect(new URL(target, url), 307));
          }
          throw new ProtectAnswer(new NextResponse(null, { status: 404 }));
        }
        if (check && !result.has(check)) throw new ProtectAnswer(new NextResponse(null, { status: 404 }));
        return result;
      },
    });
    try {
      const answer = await handler?.(auth, request, event);
      if (answer) return answer;
    } catch (error) {
      if (error instanceof ProtectAnswer) return error.response;
      throw error;
    }
    // The path, for auth.protect()'s redirect back from a server component (only ever used as a
    // same-origin path). Any value the client sent for it is replaced.
    const headers = new Headers(request.headers);
    headers.set(URL_HEADER, path);
    return NextResponse.next({ request: { headers } });
  };
}
