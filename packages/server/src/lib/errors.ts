/**
 * Errors the server raises. The catalogue (codes and their statuses) is the shared contract's, so
 * the status for a code can never drift between routes or between the server and the SDKs.
 */
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '@gatehouse/contract';

export { ERROR_STATUS, type ErrorBody, type ErrorCode };

export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: { code: this.code, message: this.message } };
    if (this.details !== undefined) body.error.details = this.details;
    return body;
  }
}

export function apiError(code: ErrorCode, message: string, details?: unknown): ApiError {
  return new ApiError(code, message, details);
}

/** Every sign-in method refuses a banned user the same way, once it has proven who they are. */
export function userBanned(): ApiError {
  return new ApiError(
    'user_banned',
    'This account is banned, so it cannot sign in. Contact the application’s support if you think this is a mistake.',
  );
}

export function notFound(what: string): ApiError {
  return new ApiError('not_found', `${what} was not found in this environment.`);
}
