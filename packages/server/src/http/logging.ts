import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';

/**
 * Query parameters whose values are logged as sent. Every other value is replaced: upload
 * signatures, OIDC `code` and `state`, setup, invitation, handoff and flow tokens all travel in
 * query strings, and a name not listed here is treated as one of them (an allowlist, so a new
 * credential-bearing parameter is hidden without anyone remembering to add it).
 */
const LOGGED_AS_SENT = new Set(['limit', 'cursor', 'status', 'month', 'role', 'type', 'subject']);
const HIDDEN = '[redacted]';

/** A URL for the log: the path, and the query with every value outside the allowlist hidden. */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      if (equals < 0) return pair.length > 64 ? HIDDEN : pair;
      return LOGGED_AS_SENT.has(name) ? pair : `${name.length > 64 ? HIDDEN : name}=${HIDDEN}`;
    });
  return `${url.slice(0, mark)}?${query.join('&')}`;
}

/**
 * The server's logger: JSON lines (pino, through Fastify), each request's lines tagged `reqId`.
 * Requests are logged by method, URL (as loggableUrl), host and peer; headers and bodies never
 * are, so credentials, cookies, passwords and codes do not reach the log.
 */
export function loggerOptions(level: Config['logLevel'], stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  // Fastify gives every request a child logger, even a silent one; with no logger it skips that.
  if (level === 'silent') return false;
  return {
    level,
    ...(stream ? { stream } : {}),
    serializers: {
      req: (request: FastifyRequest) => {
        const port = request.socket?.remotePort;
        return {
          method: request.method,
          url: loggableUrl(request.url),
          host: request.hostname,
          remoteAddress: request.ip,
          ...(port === undefined ? {} : { remotePort: port }),
        };
      },
    },
  };
}

// What a proxy's request id may look like to be kept: no spaces, quotes or control characters.
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * Each request's id (`reqId` in the log, `x-request-id` in the answer): a proxy's `x-request-id`
 * when proxies are trusted (TRUST_PROXY), so one id follows a request through both logs; else new.
 */
export function requestIdGenerator(trustProxy: boolean): (request: IncomingMessage) => string {
  if (!trustProxy) return () => randomUUID();
  return (request) => {
    const given = request.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  };
}
