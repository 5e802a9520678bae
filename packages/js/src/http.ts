/**
 * Requests to Gatehouse: a route of the contract's `SessionRoutes` with a bearer (the publishable
 * key or an access token), its answer as the route's type, its refusal as a GatehouseError.
 */
import type { RouteCaller, SessionRoutes } from '@gatehouse/contract';
import { routeTarget } from '@gatehouse/contract/route-target';
import { errorFromResponse, networkError } from './errors.js';

/** The session API, called by route: `call('GET /v1/me/organization/members/{userId}', {params: {userId}})`. */
export type SessionCall = RouteCaller<SessionRoutes>;

/** What a call passes besides its route (typed by `SessionCall` for callers). */
export interface RouteRequest {
  params?: Record<string, string>;
  query?: object;
  body?: unknown;
}

/** A request of any route with the given bearer; `timeoutMs` bounds the answer, body included. */
export type Send = (route: string, input: RouteRequest | undefined, bearer: string, timeoutMs?: number) => Promise<unknown>;

export function createSend(base: string, doFetch: typeof fetch): Send {
  return async (route, input = {}, bearer, timeoutMs) => {
    const { method, path } = routeTarget(route, input);
    const { body } = input;
    const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await doFetch(base + path, {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (cause) {
      throw networkError(cause);
    }
    if (!response.ok) throw await errorFromResponse(response);
    try {
      return response.status === 204 ? undefined : await response.json();
    } catch (cause) {
      // Timed out while the body was arriving: as much a network failure as no answer at all.
      throw signal?.aborted ? networkError(cause) : cause;
    }
  };
}

/** The typed calls of one bearer. */
export function callWith(send: Send, bearer: string, timeoutMs?: number): SessionCall {
  return ((route: string, input?: RouteRequest) => send(route, input, bearer, timeoutMs)) as SessionCall;
}

/** The origins `gh.fetch` may send the access token to: Gatehouse's and the listed backends (the page's own is added at call time). */
export function tokenGuard(base: string, backendOrigins: string[] = []): (input: RequestInfo | URL) => void {
  const tokenOrigins = new Set([new URL(base).origin, ...backendOrigins.map((origin) => new URL(origin).origin)]);
  /** The token goes to this page's origin, Gatehouse's, and the listed backends: never to a third party. */
  return (input) => {
    const raw = input instanceof Request ? input.url : String(input);
    const page = typeof location === 'undefined' ? undefined : location.origin;
    let origin: string | undefined;
    try {
      origin = new URL(raw, page).origin;
    } catch {
      origin = undefined;
    }
    if (origin !== undefined && (origin === page || tokenOrigins.has(origin))) return;
    throw new TypeError(
      `gh.fetch sends the access token only to this page's origin, Gatehouse and backendOrigins; ${origin ?? raw} is none of them. ` +
        'Add it to backendOrigins in createGatehouse() if it is your backend, or call fetch() for third-party URLs.',
    );
  };
}
