import type { ErrorCode } from '@gatehouse/contract';

/** A refusal from the Gatehouse API: its status, its catalogue code and its message. */
export class GatehouseApiError extends Error {
  override readonly name = 'GatehouseApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra detail the server sent (e.g. the fields of an invalid_request). */
    readonly details?: unknown,
    /** On a 429: the seconds the server asked to wait. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}
