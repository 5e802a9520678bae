/**
 * The one error catalogue of the API: every refusal's code and the status it always has. The
 * server raises only these codes and the SDKs type `code` as this union.
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
