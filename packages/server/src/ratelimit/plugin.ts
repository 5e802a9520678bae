import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../lib/errors.js';
import { effectiveRateLimit } from '../tenancy/settings.js';
import { COUNTED, type RateLimiter } from './limiter.js';
import { resetSeconds, retryAfterSeconds, type RateLimitDecision } from './window.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` for credentialed routes that are not counted: `GET /v1/jwks` (keys are public and cacheable). */
    rateLimit?: false;
  }
}

export interface RateLimitPluginOptions {
  limiter: RateLimiter;
}

/** Whether the limiter counts requests to this route (by credential: see the hook below). */
export function routeIsCounted(request: FastifyRequest): boolean {
  return request.routeOptions.config.rateLimit !== false;
}

/** The text of a number that repeats from request to request (a limit, a second), made once per change. */
function textOfRepeating() {
  let last = Number.NaN;
  let text = '';
  return (value: number) => (value === last ? text : ((last = value), (text = String(value))));
}
const limitText = textOfRepeating();
const resetText = textOfRepeating();

function apply(environmentId: string, decision: RateLimitDecision, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  // Set before the handler runs, so errors it throws later (400, 404, …) carry them too.
  // Strings, one call each: no object to build and walk, nothing for Node to convert.
  void reply
    .header('x-ratelimit-limit', limitText(decision.limit))
    .header('x-ratelimit-remaining', String(decision.remaining))
    .header('x-ratelimit-reset', resetText(resetSeconds(decision)));
  if (decision.allowed) return done();
  const seconds = retryAfterSeconds(decision);
  done(
    new ApiError(
      'rate_limited',
      `Environment ${environmentId} is over its limit of ${decision.limit} requests per minute; retry in ${seconds} seconds.`,
      undefined,
      { 'retry-after': String(seconds) },
    ),
  );
}

/**
 * Counts every request authenticated to an environment against that environment's window. It
 * runs after the credentials hook, so public routes (health, JWKS, discovery) and refused
 * credentials are never counted, and platform-key requests have no environment to count against.
 * A refused request takes no slot. A route opts out with `config: { rateLimit: false }`.
 */
export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async (app: FastifyInstance, { limiter }) => {
    app.decorateRequest(COUNTED, null);
    const count = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const auth = request.auth;
      if (!auth || auth.kind === 'platform') return done();
      const environment = auth.environment;
      const result = limiter.hitOnce(request, environment.id, effectiveRateLimit(environment));
      if (result instanceof Promise) {
        result.then((decision) => apply(environment.id, decision, reply, done), done);
      } else {
        apply(environment.id, result, reply, done);
      }
    };
    // Attached to each counted route when it is added, so no request pays for reading its route's
    // options (Fastify builds that object on every access). Route hooks run after the app's, so
    // after the credentials hook.
    app.addHook('onRoute', (route) => {
      if (route.config?.rateLimit === false) return;
      const own = route.onRequest;
      route.onRequest = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), count];
    });
  },
  { name: 'gatehouse-rate-limit', dependencies: ['gatehouse-credentials'] },
);
