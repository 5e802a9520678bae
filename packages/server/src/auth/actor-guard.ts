import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { SessionIdentity } from '../http/credentials.js';
import { apiError } from '../lib/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Refuse an impersonated session (403 forbidden), whatever the path (auth/actor-guard.ts). */
    notImpersonated?: boolean;
  }
}

/**
 * What an impersonated session may not do (docs/impersonation.md): change how the account signs in
 * (password, second factors, passkeys, linked identities), manage API keys, reverify, or delete the
 * account. Reads stay open: the actor sees what the user sees. Matched on the route's template, so a
 * route added later under one of these prefixes is covered without registering anything.
 */
const REFUSED_PREFIXES = ['/v1/me/mfa', '/v1/me/passkeys', '/v1/me/api-keys', '/v1/me/organization/api-keys', '/v1/me/identities'];
const REFUSED_ANY_METHOD = new Set(['/v1/me/password', '/v1/me/reverify']);
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the route (method and template) is closed to impersonated sessions. */
export function refusedWhileImpersonated(method: string, url: string): boolean {
  if (method === 'DELETE' && url === '/v1/me') return true;
  if (REFUSED_ANY_METHOD.has(url) || [...REFUSED_ANY_METHOD].some((path) => url.startsWith(`${path}/`))) return true;
  if (READS.has(method)) return false;
  return REFUSED_PREFIXES.some((prefix) => url === prefix || url.startsWith(`${prefix}/`));
}

/** Who acts, when the session is impersonated: its access token's `act.sub` (signed by this server), else undefined. */
export function actorOf(session: SessionIdentity): string | undefined {
  const act = session.claims.act;
  if (typeof act !== 'object' || act === null) return undefined;
  const sub = (act as { sub?: unknown }).sub;
  return typeof sub === 'string' ? sub : '';
}

/** 403 forbidden for an impersonated session: call it first in a handler the prefixes above do not cover. */
export function assertNotImpersonated(session: SessionIdentity): void {
  if (actorOf(session) !== undefined) {
    throw apiError(
      'forbidden',
      'This session was started with an actor token (impersonation): it cannot change credentials, second factors, passkeys or API keys, nor delete the account. The user must do this themself.',
    );
  }
}

/**
 * Checked app-wide right after the credentials and before anything else judges the request (the
 * organization MFA gate, body validation, reverification): an actor is refused first.
 */
export const impersonationGuard = fp(
  async (app: FastifyInstance) => {
    app.addHook('preValidation', async (request) => {
      const auth = request.auth;
      if (auth?.kind !== 'session') return;
      if (!request.routeOptions.config.notImpersonated && !refusedWhileImpersonated(request.method, request.routeOptions.url ?? '')) return;
      assertNotImpersonated(auth.session);
    });
  },
  { name: 'gatehouse-impersonation-guard' },
);
