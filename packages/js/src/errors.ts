import type { ErrorCode } from '@gatehouse/contract';

/** Not server codes: the request never got an answer, or the answer was not Gatehouse's. */
export type ClientErrorCode = 'network_error' | 'invalid_response';

/** Every refusal, from the server (`code` from its catalogue) or from the client itself. */
export class GatehouseError extends Error {
  override readonly name = 'GatehouseError';
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly code: ErrorCode | ClientErrorCode;
  /** Seconds to wait before retrying, from `Retry-After` (429). */
  readonly retryAfter?: number;
  readonly details?: unknown;

  constructor(init: {
    status: number;
    code: ErrorCode | ClientErrorCode;
    message: string;
    retryAfter?: number | undefined;
    details?: unknown;
  }) {
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
    code: 'network_error',
    message: `Gatehouse could not be reached (${reason}). Check baseUrl and the network; the client retries on its own.`,
  });
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
    code: 'invalid_response',
    message: `Gatehouse answered ${response.status} without an error body. Check that baseUrl points at a Gatehouse server.`,
    retryAfter,
  });
}
