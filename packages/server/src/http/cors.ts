import type { FastifyInstance } from 'fastify';

/**
 * CORS for the browser surfaces (DESIGN.md): permissive by design. Bearer tokens are not ambient
 * (no cookies), so CORS is not the security boundary; the origin lock on the real request is. The
 * origin is echoed, credentials are never allowed, and Authorization may be sent.
 */
const BROWSER_SURFACE = /^\/v1\/(auth\/|me(\/|$|\?)|environment($|\?)|jwks($|\?))/;

export function installCors(app: FastifyInstance): void {
  // Registered before the credential hook resolves anything, so preflights need no credential.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined || !BROWSER_SURFACE.test(request.url)) return;
    void reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      return reply
        .code(204)
        .header('access-control-allow-methods', 'GET, POST, PATCH, DELETE')
        .header('access-control-allow-headers', 'Authorization, Content-Type')
        .header('access-control-max-age', '600')
        .send();
    }
  });
}
