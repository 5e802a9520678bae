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

/**
 * The request never got an answer from Gatehouse: the connection failed (`network`) or the
 * per-request timeout passed (`timeout`). Nothing is known about whether a change was applied;
 * `cause` holds fetch's own error.
 */
export class GatehouseNetworkError extends Error {
  override readonly name = 'GatehouseNetworkError';
  constructor(
    readonly kind: 'network' | 'timeout',
    readonly method: string,
    readonly url: string,
    options: { cause: unknown },
  ) {
    const why = kind === 'timeout' ? 'timed out' : 'could not reach Gatehouse';
    const detail = options.cause instanceof Error && options.cause.cause instanceof Error ? ` (${options.cause.cause.message})` : '';
    super(`${method} ${new URL(url).pathname} ${why}${detail}. Check baseUrl and that Gatehouse is running.`, options);
  }
}
