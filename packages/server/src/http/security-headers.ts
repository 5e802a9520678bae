import type { FastifyInstance } from 'fastify';

/**
 * The headers every response carries, errors and 404s included, as a security scan of a JSON API
 * expects them (OWASP REST Security): nothing may sniff, frame, render or leak a referrer from an
 * answer, and nothing stores it. A route that must differ says so itself after this hook ran: the
 * JWKS and discovery documents are cacheable, and stored images are immutable and loadable
 * cross-origin by <img>.
 */
export function securityHeaders(baseUrl: string): Readonly<Record<string, string>> {
  return {
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    // Only no-cors loads (<img>, <script>) are affected; the SDKs' CORS fetches are not.
    'cross-origin-resource-policy': 'same-origin',
    // Tokens and personal data must never land in a browser or proxy cache.
    'cache-control': 'no-store',
    // Over plain http the header is ignored, and it would pin a dev host name to https.
    ...(baseUrl.startsWith('https:') ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  };
}

/** The one hook (it also names the request's id); it runs first, so whatever a later hook or handler refuses carries the headers. */
export function installSecurityHeaders(app: FastifyInstance, headers: Readonly<Record<string, string>>): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.headers(headers);
    // The id of this request's log lines, so an answer can be found in the log.
    void reply.header('x-request-id', request.id);
    done();
  });
}
