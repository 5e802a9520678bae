import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Metrics, SignInOutcome } from './metrics.js';

/**
 * The routes that end in a session, by the sign-in method they count as. Read from the route and
 * the status in one onResponse hook, so the flows themselves carry no metrics code.
 */
const SIGN_IN_ROUTES: Record<string, string> = {
  '/v1/auth/signin': 'password',
  '/v1/auth/email-code/verify': 'email_code',
  '/v1/auth/magic-link/verify': 'magic_link',
  '/v1/auth/sso/verify': 'sso',
  '/v1/auth/signup/verify': 'sign_up_verification',
  '/v1/auth/invitations/accept': 'invitation',
  '/v1/auth/handoff': 'handoff',
  '/v1/auth/passkey/verify': 'passkey',
  '/v1/auth/signin/second-factor': 'second_factor',
  '/v1/auth/actor-token': 'actor_token',
};

/** A session (2xx), a second factor asked for (202), a refusal of the credential (401, 403); other answers are not attempts. */
function signInOutcome(status: number): SignInOutcome | undefined {
  if (status === 202) return 'second_factor';
  if (status >= 200 && status < 300) return 'success';
  if (status === 401 || status === 403) return 'failure';
  return undefined;
}

/** Counts every answer: by route template, and the sign-ins and rate-limit refusals among them. */
export function installMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    metrics.request(request.method, route, status, reply.elapsedTime / 1000);
    if (status === 429) metrics.rateLimitRefusal();
    const method = SIGN_IN_ROUTES[route];
    if (method !== undefined && request.method === 'POST') {
      const outcome = signInOutcome(status);
      if (outcome) metrics.signIn(method, outcome);
    }
    done();
  });
}

/**
 * `/metrics` on a listener of its own (METRICS_PORT), never the public port: the numbers describe
 * every tenant, and a scraper reaches it on the private network.
 */
export async function listenForScrapes(metrics: Metrics, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at GET /metrics.\n');
      return;
    }
    metrics.exposition().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be collected.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
