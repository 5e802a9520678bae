import type { OpenAPIV3_1 } from 'openapi-types';
import { ERROR_STATUS, type ErrorCode } from '../lib/errors.js';
import type { CredentialKind } from './credentials.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Catalogue codes this route answers beyond those its credentials, path and body imply. */
    errors?: readonly ErrorCode[];
  }
}

/** What the OpenAPI document needs to know of a route to list the errors it can answer. */
export interface DocumentedRoute {
  method: string;
  url: string;
  credentials: readonly CredentialKind[];
  rateLimited: boolean;
  hasBody: boolean;
  hasParams: boolean;
  /** Codes the route itself declares (`config.errors`), beyond those its shape implies. */
  errors: readonly ErrorCode[];
}

const WHEN: Record<number, string> = {
  400: 'The request is invalid: a field, parameter, query value, URL escape or the HTTP framing. `details.fields` names the fields.',
  401: 'The credential is missing, unknown or expired, or the session was revoked.',
  403: 'The credential is of the wrong kind for this surface, comes from a refused origin, or lacks a permission.',
  404: 'The resource named in the path does not exist in this environment.',
  408: 'The request did not arrive in time.',
  409: 'The change conflicts with the current state.',
  413: 'The body is too large.',
  414: 'A path segment is longer than any id of this API.',
  415: 'The body is not JSON (or not the declared media type).',
  422: 'The request is well formed but cannot be carried out.',
  429: 'The environment is over its per-minute request limit; `Retry-After` says when to retry.',
  431: 'The request line and headers are too large.',
  500: 'Something failed on the server; the message never holds details.',
  503: 'The server is shutting down; retry, another node will answer.',
};

function codesOf(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
}

/** `components.responses`: one per status, whose body names exactly the catalogue codes of that status. */
export function errorResponseComponents(): Record<string, OpenAPIV3_1.ResponseObject> {
  const statuses = [...new Set<number>(Object.values(ERROR_STATUS))].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [
      `Error${status}`,
      {
        description: WHEN[status] ?? 'Refused.',
        ...(status === 429
          ? { headers: { 'Retry-After': { description: 'Seconds to wait (1 to 60).', schema: { type: 'integer' } } } }
          : {}),
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['error'],
              additionalProperties: false,
              properties: {
                error: {
                  type: 'object',
                  required: ['code', 'message'],
                  properties: {
                    code: { type: 'string', enum: codesOf(status) },
                    message: { type: 'string', description: 'A sentence saying what to do.' },
                    details: { description: 'Present on some refusals, e.g. `{fields}` on 400.' },
                  },
                },
              },
            },
          },
        },
      },
    ]),
  );
}

/** The statuses a route can answer with an error, from its shape and its declared codes. */
export function errorStatusesOf(route: DocumentedRoute): number[] {
  const statuses = new Set<number>([400, 408, 431, 500, 503]);
  if (route.credentials.length > 0) {
    statuses.add(401);
    statuses.add(403);
  }
  if (route.rateLimited) statuses.add(429);
  if (route.hasParams) {
    statuses.add(404);
    statuses.add(414);
  }
  if (route.hasBody) {
    statuses.add(413);
    statuses.add(415);
  }
  for (const code of route.errors) statuses.add(ERROR_STATUS[code]);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * Adds each route's error answers to the generated document, as references to the shared
 * responses; a status the route documents itself (health's 503) is left as the route wrote it.
 */
export function addErrorResponses<T extends object>(document: T, routes: readonly DocumentedRoute[]): T {
  const { paths } = document as { paths?: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
  for (const route of routes) {
    const operation = paths?.[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
    if (!operation) continue;
    const responses = (operation.responses ??= {});
    for (const status of errorStatusesOf(route)) {
      responses[String(status)] ??= { $ref: `#/components/responses/Error${status}` };
    }
  }
  return document;
}
