import { cookies, headers } from 'next/headers';
import { notFound, redirect } from 'next/navigation';
import { createGatehouseClient, type HasCheck, type User } from '@gatehouse/backend';
import { authenticate, SESSION_COOKIE, type AuthObject, type SignedInAuthObject } from './authenticate.js';
import { resolveConfig } from './config.js';
import { isDocumentRequest, schemeOf, type RequestFacts } from './request.js';

/** Set by gatehouseMiddleware for auth.protect()'s redirect back; used only as a same-origin path. */
export const URL_HEADER = 'x-gatehouse-url';

async function requestFacts(): Promise<{ facts: RequestFacts; get: (name: string) => string | null }> {
  const [h, c] = await Promise.all([headers(), cookies()]);
  const facts: RequestFacts = {
    authorization: h.get('authorization'),
    cookie: c.get(SESSION_COOKIE)?.value || null,
    origin: h.get('origin'),
    secFetchSite: h.get('sec-fetch-site'),
    secFetchDest: h.get('sec-fetch-dest'),
    accept: h.get('accept'),
    host: h.get('host'),
    forwardedHost: h.get('x-forwarded-host'),
    // next/headers gives no URL: the scheme is known when a proxy (or Next itself) says it.
    protocol: schemeOf(h.get('x-forwarded-proto'), undefined),
    // A server action is always a POST; elsewhere next/headers does not say.
    method: h.has('next-action') ? 'POST' : undefined,
  };
  return { facts, get: (name) => h.get(name) };
}

export interface ProtectOptions {
  /** Where a signed-out page request goes; default the configured sign-in URL (`/sign-in`). */
  signInUrl?: string;
}

export interface Auth {
  /**
   * Who is signed in, in a server component, route handler or server action: the request's
   * `Authorization: Bearer` token or `__gh_session` cookie, verified here, offline. It never relies
   * on the middleware having run, nor on any header the middleware might have set.
   */
  (): Promise<AuthObject>;
  /**
   * The signed-in auth, or no further: a signed-out page request (a document load, a client-side
   * navigation or a server action) is redirected to sign-in, anything else is answered 404; a
   * signed-in user without the permission or role asked for gets a 404.
   */
  protect(check?: HasCheck, options?: ProtectOptions): Promise<SignedInAuthObject>;
}

/** A same-origin path only: a forged header cannot turn the redirect into an open one. */
export function safePath(value: string | null): string | undefined {
  return value && value.startsWith('/') && !value.startsWith('//') && !value.includes('\\') ? value : undefined;
}

export function signInRedirect(signInUrl: string, returnTo: string | undefined): string {
  if (!returnTo) return signInUrl;
  return `${signInUrl}${signInUrl.includes('?') ? '&' : '?'}redirect_url=${encodeURIComponent(returnTo)}`;
}

export const auth: Auth = Object.assign(
  async function auth(): Promise<AuthObject> {
    const { facts } = await requestFacts();
    return authenticate(facts, resolveConfig());
  },
  {
    async protect(check?: HasCheck, options: ProtectOptions = {}): Promise<SignedInAuthObject> {
      const { facts, get } = await requestFacts();
      const config = resolveConfig();
      const result = await authenticate(facts, config);
      if (!result.isSignedIn) {
        const page = isDocumentRequest(facts) || get('rsc') === '1' || get('next-action') !== null;
        if (page) redirect(signInRedirect(options.signInUrl ?? config.signInUrl, safePath(get(URL_HEADER))));
        notFound();
      }
      if (check && !result.has(check)) notFound();
      return result;
    },
  },
);

/**
 * The signed-in user, read from Gatehouse with the secret key (GATEHOUSE_SECRET_KEY), or null when
 * signed out. One request to Gatehouse per call: call it once per request.
 */
export async function currentUser(): Promise<User | null> {
  const { userId } = await auth();
  if (!userId) return null;
  const { secretKey, baseUrl } = resolveConfig();
  if (!secretKey || !baseUrl) {
    throw new TypeError('currentUser() needs GATEHOUSE_SECRET_KEY and NEXT_PUBLIC_GATEHOUSE_URL (it reads the user with the secret key).');
  }
  return createGatehouseClient({ secretKey, baseUrl }).users.get(userId);
}
