export { verifyToken, type JwtTokenType, type VerifyTokenOptions } from './verify-token.js';
export { verifyApiKey, type VerifiedApiKey, type VerifyApiKeyOptions } from './api-keys.js';
export { getMachineToken, GatehouseMachineTokenError, type MachineTokenOptions } from './machine-token.js';
export {
  ApiKeyVerificationError,
  TokenVerificationError,
  type ApiKeyVerificationErrorReason,
  type TokenVerificationErrorReason,
} from './errors.js';
export type { ActorClaim, GatehouseClaims, MachineClaims } from './claims.js';
export type { TokenAlgorithm } from './keys.js';
export {
  authenticateRequest,
  type AuthenticateRequestOptions,
  type AuthenticateAnyRequestOptions,
  type AnyRequestAuth,
  type ApiKeyAuth,
  type MachineAuth,
  type TokenType,
  type AuthenticatableRequest,
  type AuthReason,
  type HasCheck,
  type ReverificationConfig,
  type ReverificationLevel,
  type ReverificationPreset,
  type RequestAuth,
  type SignedInAuth,
  type SignedOutAuth,
} from './authenticate-request.js';
export { signedInAuth as authFromClaims } from './authenticate-request.js';
export { cryptoRuntime } from './runtime.js';
export { unauthenticatedBody, unauthenticatedResponse } from './refusal.js';
export { requireAuthResponse } from './fetch-guard.js';
export { createGatehouseClient, type GatehouseClient, type GatehouseClientOptions } from './admin/client.js';
export { GatehouseApiError, GatehouseNetworkError } from './admin/api-error.js';
export { PageList } from './admin/page-list.js';
export type { RetryOptions } from './admin/transport.js';
export type * from './admin/types.js';
export type { ErrorCode } from '@gatehouse/contract';
export { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS, type WebhookEvent, type WebhookHeaders } from './webhooks.js';
