import type { FastifyInstance } from 'fastify';

/**
 * CORS for the browser surfaces (docs/architecture.md, "CORS"): permissive by design. Bearer tokens are not ambient
 * (no cookies), so CORS is not the security boundary; the origin lock on the real request is. The
 * origin is echoed, credentials are never allowed, and Authorization may be sent.
 */
const BROWSER_SURFACE = /^\/v1\/(auth\/|me(\/|$|\?)|environment($|\?)|jwks($|\?))/;
// Signed upload URLs and public asset URLs: the signature is the credential, and pages PUT to them.
const ASSET_SURFACE = /^\/v1\/assets\//;
// Without this a page cannot read the limit headers, or Retry-After on a 429.
const EXPOSED = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

export function installCors(app: FastifyInstance): void {
  // Registered before the credential hook resolves anything, so preflights need no credential.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const assets = ASSET_SURFACE.test(request.url);
    if (!assets && !BROWSER_SURFACE.test(request.url)) return;
    void reply.header('access-control-allow-origin', origin).header('vary', 'Origin').header('access-control-expose-headers', EXPOSED);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      return reply
        .code(204)
        .header('access-control-allow-methods', assets ? 'GET, PUT' : 'GET, POST, PATCH, DELETE')
        .header('access-control-allow-headers', assets ? 'Content-Type, x-amz-checksum-sha256' : 'Authorization, Content-Type')
        .header('access-control-max-age', '600')
        .send();
    }
  });
}
