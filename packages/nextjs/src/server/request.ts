/** What authentication reads of a request, however the request arrived (middleware, next/headers). */
export interface RequestFacts {
  authorization: string | null;
  cookie: string | null;
  origin: string | null;
  secFetchSite: string | null;
  secFetchDest: string | null;
  accept: string | null;
  host: string | null;
  forwardedHost: string | null;
  /** The scheme the browser used, when known: `x-forwarded-proto`, else the request URL's. */
  protocol: string | undefined;
  /** Known in the middleware and for server actions; undefined in server components. */
  method: string | undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function parsedOrigin(origin: string): { host: string; protocol: string } | undefined {
  try {
    const url = new URL(origin);
    return { host: url.host.toLowerCase(), protocol: url.protocol };
  } catch {
    return undefined;
  }
}

/** `https:` from `x-forwarded-proto: https` or a URL's `https:`. */
export function schemeOf(forwardedProto: string | null, url: string | undefined): string | undefined {
  const forwarded = forwardedProto?.split(',')[0]?.trim().toLowerCase();
  if (forwarded === 'http' || forwarded === 'https') return `${forwarded}:`;
  if (!url) return undefined;
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
}

/**
 * Cross-site request forgery, checked wherever the cookie is the credential. SameSite=Lax already
 * keeps the cookie off cross-site subresource requests and POSTs, but not off requests from the
 * same site: another port, a sibling subdomain, or plain http of the same host. So a request whose
 * `Origin` is present must be the app's own origin (the Host it was sent to) or a listed one; an
 * opaque `null` origin never is. Browsers send `Origin` on every cross-origin request and on every
 * POST, so a forged form or fetch always shows where it came from. Without `Origin` (same-origin
 * GETs, top-level navigations, clients that are not browsers), an unsafe method from another site
 * (`Sec-Fetch-Site`) is refused too. Returns the refusal's message, or undefined.
 */
export function crossSiteRefusal(facts: RequestFacts, allowedOrigins: string[]): string | undefined {
  const { origin } = facts;
  if (origin !== null) {
    const own = (facts.forwardedHost?.split(',')[0]?.trim() ?? facts.host)?.toLowerCase();
    const from = origin === 'null' ? undefined : parsedOrigin(origin);
    // The same host over another scheme (a page on plain http) is another origin, when the scheme is known.
    if (from !== undefined && from.host === own && (facts.protocol === undefined || facts.protocol === from.protocol)) return undefined;
    if (allowedOrigins.some((allowed) => allowed.replace(/\/+$/, '') === origin)) return undefined;
    return `A request from a page on ${origin} carried the session cookie, and that is not this app's origin: it is treated as signed out (cross-site request forgery). List the origin in GATEHOUSE_ALLOWED_ORIGINS if it is yours.`;
  }
  const method = facts.method?.toUpperCase();
  if (method !== undefined && !SAFE_METHODS.has(method) && (facts.secFetchSite === 'cross-site' || facts.secFetchSite === 'same-site')) {
    return `A ${method} from another site carried the session cookie: it is treated as signed out (cross-site request forgery).`;
  }
  return undefined;
}

/** A page load (DESIGN: `Sec-Fetch-Dest: document`, or an `Accept` naming text/html). */
export function isDocumentRequest(facts: Pick<RequestFacts, 'secFetchDest' | 'accept'>): boolean {
  return facts.secFetchDest === 'document' || (facts.secFetchDest === null && /\btext\/html\b/i.test(facts.accept ?? ''));
}

/** The value of one cookie in a `Cookie` header. */
export function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim() || null;
  }
  return null;
}

/** The facts of a fetch `Request` (the middleware, route handlers given their request). */
export function factsOfRequest(request: Request, sessionCookie: string): RequestFacts {
  const h = request.headers;
  return {
    authorization: h.get('authorization'),
    cookie: cookieValue(h.get('cookie'), sessionCookie),
    origin: h.get('origin'),
    secFetchSite: h.get('sec-fetch-site'),
    secFetchDest: h.get('sec-fetch-dest'),
    accept: h.get('accept'),
    host: h.get('host'),
    forwardedHost: h.get('x-forwarded-host'),
    protocol: schemeOf(h.get('x-forwarded-proto'), request.url),
    method: request.method,
  };
}
