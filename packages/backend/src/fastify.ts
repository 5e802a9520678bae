import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticateRequest, type AuthenticateRequestOptions, type RequestAuth, type SignedInAuth } from './authenticate-request.js';
import { unauthenticatedBody, wwwAuthenticate } from './refusal.js';

/** Fastify (4 and 5). Only types come from fastify: no runtime dependency. */

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the gatehouse plugin on every request; read it with getAuth(request). */
    gatehouseAuth: RequestAuth | null;
  }
}

/**
 * Authenticates every request in the scope it is registered in (and, like fastify-plugin, in the
 * parent scope) and sets `request.gatehouseAuth`. Never refuses: add requireAuth as a preHandler.
 */
export async function gatehouse(app: FastifyInstance, options: AuthenticateRequestOptions): Promise<void> {
  app.decorateRequest('gatehouseAuth', null);
  app.addHook('onRequest', async (request) => {
    request.gatehouseAuth = await authenticateRequest(request.raw, options);
  });
}
// What fastify-plugin does: the hook applies to the app that registers the plugin, not a child scope.
(gatehouse as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
(gatehouse as unknown as Record<symbol, unknown>)[Symbol.for('fastify.display-name')] = '@gatehouse/backend';

/** A preHandler that answers 401 in Gatehouse's error shape unless the request is signed in. */
export async function requireAuth(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const auth = request.gatehouseAuth;
  if (auth === null || auth === undefined) {
    throw new Error('requireAuth needs the gatehouse plugin: await app.register(gatehouse, options) first.');
  }
  if (auth.isSignedIn) return;
  await reply.code(401).header('www-authenticate', wwwAuthenticate(auth)).send(unauthenticatedBody(auth));
}

/** The request's auth, as the gatehouse plugin set it. */
export function getAuth(request: FastifyRequest): RequestAuth {
  const auth = request.gatehouseAuth;
  if (!auth) throw new Error('getAuth needs the gatehouse plugin: await app.register(gatehouse, options) first.');
  return auth;
}

export type { AuthenticateRequestOptions, RequestAuth, SignedInAuth };
