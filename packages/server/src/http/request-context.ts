import type { FastifyRequest } from 'fastify';

export interface RequestContext {
  /** The request's Origin header, when there was one; becomes the `azp` claim. */
  origin: string | undefined;
  userAgent?: string | undefined;
}

/** What a session remembers of the request that created or refreshed it. */
export function requestContext(request: FastifyRequest): RequestContext {
  return { origin: request.headers.origin, userAgent: request.headers['user-agent'] };
}
