/**
 * API keys of the signed-in user (`gh.user.apiKeys`) and of the session's organization
 * (`gh.organization.apiKeys`, needs org:manage). A key's secret is in the create answer only.
 */
import type { Core } from './core.js';
import type { ApiKey, CreatedApiKey, CreateOwnApiKeyBody, Deleted } from './types.js';

/** `name`, optional `scopes` (e.g. `invoices:read`) and `expiresInSeconds` (none: never expires). */
export type CreateApiKeyParams = CreateOwnApiKeyBody;

export interface ApiKeyFlows {
  /** The secret (`gh_ak_…`) is shown in this answer only. */
  create(params: CreateApiKeyParams): Promise<CreatedApiKey>;
  /** Newest first, never with secrets; `lastUsedAt` is to the minute. */
  list(): Promise<ApiKey[]>;
  /** Stops the key at once, on every node. */
  revoke(keyId: string): Promise<Deleted>;
}

/** The user's own keys. Creating one needs a recent verification (`reverification_required`). */
export function userApiKeys(core: Core): ApiKeyFlows {
  return {
    create: (params) => core.authed('POST /v1/me/api-keys', { body: params }),
    list: async () => (await core.authed('GET /v1/me/api-keys')).data,
    revoke: (keyId) => core.authed('DELETE /v1/me/api-keys/{keyId}', { params: { keyId } }),
  };
}

/** The keys of the organization the session acts as; every call needs org:manage. */
export function organizationApiKeys(core: Core): ApiKeyFlows {
  return {
    create: (params) => core.authed('POST /v1/me/organization/api-keys', { body: params }),
    list: async () => (await core.authed('GET /v1/me/organization/api-keys')).data,
    revoke: (keyId) => core.authed('DELETE /v1/me/organization/api-keys/{keyId}', { params: { keyId } }),
  };
}
