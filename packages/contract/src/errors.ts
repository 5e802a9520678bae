/**
 * The one error catalogue of the API: every refusal's code and the status it always has. The
 * server raises only these codes and the SDKs type `code` as this union.
 *
 * `request_timeout`, `uri_too_long`, `headers_too_large` and `unavailable` are answered by the HTTP
 * layer before any route runs; each keeps the status HTTP gives that condition, because clients and
 * load balancers act on the status (a 503 is retried on another node, a 431 is not retried as is).
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
  user_banned: 403,
  reverification_required: 403,
  second_factor_required: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  user_not_found: 422,
  unsupported_image_type: 422,
  image_too_large: 422,
  weak_password: 422,
  sso_not_configured: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}
