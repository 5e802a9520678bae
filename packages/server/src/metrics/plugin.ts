import { createServer, type Server } from 'node:http';
import type { FastifyInstance, onResponseHookHandler } from 'fastify';
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

/**
 * Counts every answer of every route, by its template, and the sign-ins and rate-limit refusals
 * among them. Each route gets a hook of its own (onRoute), holding its series: nothing is looked
 * up per request. Answers no route matched (404s of unknown paths) are not counted. Call before
 * the routes are registered.
 */
export function installMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    const series = new Map(methods.map((method) => [method, metrics.route(method, route.url)]));
    const only = methods.length === 1 ? series.get(methods[0]!)! : undefined;
    const signInMethod = SIGN_IN_ROUTES[route.url];
    const observe: onResponseHookHandler = (request, reply, done) => {
      const status = reply.statusCode;
      (only ?? series.get(request.method))?.observe(status, reply.elapsedTime / 1000);
      if (status === 429) metrics.rateLimitRefusal();
      if (signInMethod !== undefined) {
        const outcome = signInOutcome(status);
        if (outcome) metrics.signIn(signInMethod, outcome);
      }
      done();
    };
    route.onResponse = [...[route.onResponse ?? []].flat(), observe];
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
