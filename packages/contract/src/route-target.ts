/**
 * A route of the tables in routes.ts made into a request: `"GET /v1/users/{userId}"` with its
 * parameters becomes the method and the path, each parameter encoded, the query appended. The one
 * piece of the route tables that runs, shared by every client: plain TypeScript with no imports, so
 * the SDKs' builds carry it inside their own dist (scripts/inline-runtime.mjs).
 */

/** A query's values: `undefined` leaves the name out. */
export type QueryValues = Record<string, string | number | boolean | undefined>;

export interface RouteTarget {
  method: string;
  /** The path with its parameters filled in and encoded, and the query string if any. */
  path: string;
}

export function routeTarget(route: string, input: { params?: Record<string, string>; query?: object } = {}): RouteTarget {
  const space = route.indexOf(' ');
  const template = route.slice(space + 1);
  const path = template.replace(/\{(\w+)\}/g, (_segment, name: string) => {
    const value = input.params?.[name];
    // The types require every parameter; this catches an untyped caller, not a user's input.
    if (typeof value !== 'string') throw new TypeError(`${route} needs its path parameter "${name}".`);
    // URLs resolve "." and ".." (even encoded) as path steps: an id of ".." would reach the parent route.
    if (value === '' || value === '.' || value === '..') {
      throw new TypeError(`${route}: ${JSON.stringify(value)} is not a valid "${name}". Pass the id Gatehouse gave you.`);
    }
    return encodeURIComponent(value);
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries((input.query ?? {}) as QueryValues)) if (value !== undefined) search.set(name, String(value));
  const query = search.toString();
  return { method: route.slice(0, space), path: query ? `${path}?${query}` : path };
}
