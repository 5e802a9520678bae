import type { FastifyRequest } from 'fastify';
import type { RequestContext } from '../sessions/service.js';

/** What a session remembers of the request that created or refreshed it. */
export function requestContext(request: FastifyRequest): RequestContext {
  return { origin: request.headers.origin, userAgent: request.headers['user-agent'] };
}
