/**
 * The one error catalogue of the API (DESIGN.md, "Errors"). Every refusal goes through here,
 * so the status for a code can never drift between routes.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  session_revoked: 401,
  credential_not_accepted: 403,
  origin_not_allowed: 403,
  forbidden: 403,
  method_disabled: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  user_not_found: 422,
  unsupported_image_type: 422,
  image_too_large: 422,
  weak_password: 422,
  rate_limited: 429,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

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

export function notFound(what: string): ApiError {
  return new ApiError('not_found', `${what} was not found in this environment.`);
}
