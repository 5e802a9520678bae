import type { ErrorCode } from '@gatehouse/contract';

/**
 * Every refusal, from the server or from the client itself, with `code` always from the catalogue so
 * a `switch` over it is exhaustive: no answer at all is `status: 0, code: 'unavailable'`, and an
 * answer that is not Gatehouse's (a proxy's 502 page, a wrong baseUrl) gets the code of its status.
 */
export class GatehouseError extends Error {
  override readonly name = 'GatehouseError';
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly code: ErrorCode;
  /** Seconds to wait before retrying, from `Retry-After` (429). */
  readonly retryAfter?: number;
  readonly details?: unknown;

  constructor(init: { status: number; code: ErrorCode; message: string; retryAfter?: number | undefined; details?: unknown }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
    if (init.details !== undefined) this.details = init.details;
  }
}

/** A refresh answered with one of these means the session is over; anything else is retried. */
export function endsSession(error: unknown): boolean {
  return error instanceof GatehouseError && (error.code === 'session_revoked' || error.code === 'unauthenticated');
}

export function networkError(cause: unknown): GatehouseError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new GatehouseError({
    status: 0,
    code: 'unavailable',
    message: `Gatehouse could not be reached (${reason}). Check baseUrl and the network; the client retries on its own.`,
  });
}

/**
 * The catalogue code an answer without Gatehouse's error body stands for. Not 401: a refresh
 * refused with `unauthenticated` signs out, and only Gatehouse itself may say that (a proxy's 401
 * page is `internal`, retried).
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

function codeOfStatus(status: number): ErrorCode {
  return CODE_OF_STATUS[status] ?? 'internal';
}

export async function errorFromResponse(response: Response): Promise<GatehouseError> {
  const header = response.headers.get('retry-after');
  const retryAfter = header !== null && /^\d+$/.test(header.trim()) ? Number(header) : undefined;
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return new GatehouseError({
      status: response.status,
      code: error.code as ErrorCode,
      message: error.message,
      retryAfter,
      details: error.details,
    });
  }
  return new GatehouseError({
    status: response.status,
    code: codeOfStatus(response.status),
    message: `Gatehouse answered ${response.status} without an error body. Check that baseUrl points at a Gatehouse server.`,
    retryAfter,
  });
}
