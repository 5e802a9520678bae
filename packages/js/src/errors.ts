import type { ErrorCode } from '@gatehouse/contract';
import { readErrorBody } from '@gatehouse/contract/error-body';

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

/** The refusal an answer carries, read by the parser every Gatehouse client shares. */
export async function errorFromResponse(response: Response): Promise<GatehouseError> {
  const text = await response.text().catch(() => '');
  const read = readErrorBody(response.status, response.headers.get('retry-after'), text);
  return new GatehouseError({
    status: read.status,
    code: read.code,
    message: read.message,
    retryAfter: read.retryAfter,
    details: read.details,
  });
}
