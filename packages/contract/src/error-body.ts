/**
 * Reading a refusal: the one parser of Gatehouse's error body that every client shares (the
 * browser client, the admin client, the console). Plain TypeScript with no imports but types, so
 * the SDKs' builds can carry it inside their own dist (scripts/inline-runtime.mjs) rather than
 * depend on this private package.
 */
import type { ErrorCode } from './errors.js';

/** An answer's error, in the catalogue's terms whatever answered. */
export interface ReadError {
  /** HTTP status. */
  status: number;
  code: ErrorCode;
  message: string;
  details?: unknown;
  /** Seconds to wait before retrying, from `Retry-After`, when the answer carried a readable one. */
  retryAfter?: number;
  /** False when the body was not Gatehouse's error shape (a proxy's page, a wrong base URL). */
  fromGatehouse: boolean;
}

/**
 * The catalogue code an answer without Gatehouse's error body stands for. Not 401: a refresh
 * refused with `unauthenticated` ends a session, and only Gatehouse itself may say that (a proxy's
 * 401 page is `internal`, which is retried).
 */
const CODE_OF_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  502: 'unavailable',
  503: 'unavailable',
  504: 'unavailable',
};

/**
 * `Retry-After` in every legal form (RFC 9110 §10.2.3: delta-seconds or an HTTP date; decimals,
 * which some proxies send, too), as seconds from `now`; undefined when absent or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now: number = Date.now()): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  // Seconds must not reach Date.parse, which reads "1.5" as a date in 2001.
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  if (!/[a-z]/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The error an answer carries, from its status, its `Retry-After` header and its body's text.
 * Gatehouse's shape `{error: {code, message, details?}}` is taken as it is; anything else gets the
 * code its status stands for and a message that says what probably went wrong.
 */
export function readErrorBody(status: number, retryAfterHeader: string | null | undefined, text: string): ReadError {
  const retryAfter = parseRetryAfter(retryAfterHeader);
  let error: { code?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error } | null)?.error;
  } catch {
    // Not JSON: a proxy or load balancer answered.
  }
  const read: ReadError =
    error && typeof error.code === 'string' && typeof error.message === 'string'
      ? { status, code: error.code as ErrorCode, message: error.message, fromGatehouse: true }
      : {
          status,
          code: CODE_OF_STATUS[status] ?? 'internal',
          message: `Gatehouse answered HTTP ${status} without its error body (${text.slice(0, 200).trim() || 'empty body'}). Check the base URL and any proxy in between.`,
          fromGatehouse: false,
        };
  if (read.fromGatehouse && error?.details !== undefined) read.details = error.details;
  if (retryAfter !== undefined) read.retryAfter = retryAfter;
  return read;
}
