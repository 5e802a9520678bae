import type {
  CreateMachineBody,
  CreateProjectBody,
  CreateRoleBody,
  CreateSsoConnectionBody,
  CreateWebhookEndpointBody,
  EmailListQuery,
  PageQuery,
  UpdateEnvironmentBody,
} from '@gatehouse/contract';
import type { Api } from './api.js';

/** One page of a cursor-paged listing: `nextCursor` goes back as `cursor` for the next; null on the last. */
export interface Paged<T> {
  data: T[];
  nextCursor: string | null;
}

export type { PageQuery };

/**
 * The platform API as typed functions, one per route of the contract's PlatformRoutes: the pages'
 * way to `/v1/platform/…`, so no page names a path. The route table types every body and answer
 * and fills (and encodes) the ids.
 */
export function createPlatform(api: Api) {
  return {
    /** This node's deployment warnings (they affect every environment). */
    instance: () => api('GET /v1/platform/instance'),
    projects: {
      list: (query: PageQuery) => api('GET /v1/platform/projects', { query }),
      create: (body: CreateProjectBody) => api('POST /v1/platform/projects', { body }),
      get: (projectId: string) => api('GET /v1/platform/projects/{projectId}', { params: { projectId } }),
      rename: (projectId: string, name: string) =>
        api('PATCH /v1/platform/projects/{projectId}', { params: { projectId }, body: { name } }),
      remove: (projectId: string) => api('DELETE /v1/platform/projects/{projectId}', { params: { projectId } }),
      uploadLogo: (projectId: string, image: Blob) =>
        api('PUT /v1/platform/projects/{projectId}/logo', { params: { projectId }, body: image }),
      removeLogo: (projectId: string) => api('DELETE /v1/platform/projects/{projectId}/logo', { params: { projectId } }),
      usage: (projectId: string, month: string) =>
        api('GET /v1/platform/projects/{projectId}/usage', { params: { projectId }, query: { month } }),
      requests: (projectId: string) => api('GET /v1/platform/projects/{projectId}/requests', { params: { projectId } }),
    },
    environments: {
      update: (environmentId: string, body: UpdateEnvironmentBody) =>
        api('PATCH /v1/platform/environments/{environmentId}', { params: { environmentId }, body }),
    },
    secretKeys: {
      list: (environmentId: string) => api('GET /v1/platform/environments/{environmentId}/secret-keys', { params: { environmentId } }),
      create: (environmentId: string) => api('POST /v1/platform/environments/{environmentId}/secret-keys', { params: { environmentId } }),
      revoke: (environmentId: string, keyId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/secret-keys/{keyId}', { params: { environmentId, keyId } }),
    },
    signingKeys: {
      list: (environmentId: string) => api('GET /v1/platform/environments/{environmentId}/signing-keys', { params: { environmentId } }),
      rotate: (environmentId: string) =>
        api('POST /v1/platform/environments/{environmentId}/signing-keys/rotate', { params: { environmentId } }),
      revoke: (environmentId: string, kid: string) =>
        api('POST /v1/platform/environments/{environmentId}/signing-keys/{kid}/revoke', { params: { environmentId, kid } }),
    },
    users: {
      /** An empty search is no search. */
      list: (environmentId: string, query: PageQuery & { query?: string }) =>
        api('GET /v1/platform/environments/{environmentId}/users', {
          params: { environmentId },
          query: { ...query, query: query.query || undefined },
        }),
      get: (environmentId: string, userId: string) =>
        api('GET /v1/platform/environments/{environmentId}/users/{userId}', { params: { environmentId, userId } }),
      remove: (environmentId: string, userId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/users/{userId}', { params: { environmentId, userId } }),
      ban: (environmentId: string, userId: string) =>
        api('POST /v1/platform/environments/{environmentId}/users/{userId}/ban', { params: { environmentId, userId } }),
      unban: (environmentId: string, userId: string) =>
        api('POST /v1/platform/environments/{environmentId}/users/{userId}/unban', { params: { environmentId, userId } }),
      sessions: (environmentId: string, userId: string) =>
        api('GET /v1/platform/environments/{environmentId}/users/{userId}/sessions', { params: { environmentId, userId } }),
      revokeSession: (environmentId: string, userId: string, sessionId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/users/{userId}/sessions/{sessionId}', {
          params: { environmentId, userId, sessionId },
        }),
      revokeSessions: (environmentId: string, userId: string) =>
        api('POST /v1/platform/environments/{environmentId}/users/{userId}/sessions/revoke', { params: { environmentId, userId } }),
      passkeys: (environmentId: string, userId: string) =>
        api('GET /v1/platform/environments/{environmentId}/users/{userId}/passkeys', { params: { environmentId, userId } }),
      removePasskey: (environmentId: string, userId: string, passkeyId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/users/{userId}/passkeys/{passkeyId}', {
          params: { environmentId, userId, passkeyId },
        }),
      identities: (environmentId: string, userId: string) =>
        api('GET /v1/platform/environments/{environmentId}/users/{userId}/identities', { params: { environmentId, userId } }),
      /** TOTP, backup codes left and passkeys (GET /v1/users/{userId}/mfa). */
      mfa: (environmentId: string, userId: string) =>
        api('GET /v1/platform/environments/{environmentId}/users/{userId}/mfa', { params: { environmentId, userId } }),
      /** Removes every second factor and signs the user out everywhere (a support reset). */
      resetMfa: (environmentId: string, userId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/users/{userId}/mfa', { params: { environmentId, userId } }),
      /** An actor token acted by the signed-in operator; its url signs in as the user on the hosted page. */
      impersonate: (environmentId: string, userId: string, operatorId: string) =>
        api('POST /v1/platform/environments/{environmentId}/actor-tokens', {
          params: { environmentId },
          body: { userId, actor: { sub: operatorId } },
        }),
      unlinkIdentity: (environmentId: string, userId: string, identityId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/users/{userId}/identities/{identityId}', {
          params: { environmentId, userId, identityId },
        }),
    },
    organizations: {
      list: (environmentId: string, query: PageQuery) =>
        api('GET /v1/platform/environments/{environmentId}/organizations', { params: { environmentId }, query }),
      get: (environmentId: string, organizationId: string) =>
        api('GET /v1/platform/environments/{environmentId}/organizations/{organizationId}', { params: { environmentId, organizationId } }),
      members: (environmentId: string, organizationId: string, query: PageQuery) =>
        api('GET /v1/platform/environments/{environmentId}/organizations/{organizationId}/members', {
          params: { environmentId, organizationId },
          query,
        }),
      setRole: (environmentId: string, organizationId: string, userId: string, role: string) =>
        api('PATCH /v1/platform/environments/{environmentId}/organizations/{organizationId}/members/{userId}', {
          params: { environmentId, organizationId, userId },
          body: { role },
        }),
      removeMember: (environmentId: string, organizationId: string, userId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/organizations/{organizationId}/members/{userId}', {
          params: { environmentId, organizationId, userId },
        }),
      pendingInvitations: (environmentId: string, organizationId: string) =>
        api('GET /v1/platform/environments/{environmentId}/organizations/{organizationId}/invitations', {
          params: { environmentId, organizationId },
          query: { status: 'pending' },
        }),
      invite: (environmentId: string, organizationId: string, body: { email: string; role: string }) =>
        api('POST /v1/platform/environments/{environmentId}/organizations/{organizationId}/invitations', {
          params: { environmentId, organizationId },
          body,
        }),
      revokeInvitation: (environmentId: string, organizationId: string, invitationId: string) =>
        api('POST /v1/platform/environments/{environmentId}/organizations/{organizationId}/invitations/{invitationId}/revoke', {
          params: { environmentId, organizationId, invitationId },
        }),
    },
    apiKeys: {
      /** The keys of one user or organization (`subject`), newest first. */
      list: (environmentId: string, subject: string, query: PageQuery) =>
        api('GET /v1/platform/environments/{environmentId}/api-keys', { params: { environmentId }, query: { ...query, subject } }),
      revoke: (environmentId: string, keyId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/api-keys/{keyId}', { params: { environmentId, keyId } }),
    },
    machines: {
      list: (environmentId: string) => api('GET /v1/platform/environments/{environmentId}/machines', { params: { environmentId } }),
      create: (environmentId: string, body: CreateMachineBody) =>
        api('POST /v1/platform/environments/{environmentId}/machines', { params: { environmentId }, body }),
      remove: (environmentId: string, machineId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/machines/{machineId}', { params: { environmentId, machineId } }),
      rotateSecret: (environmentId: string, machineId: string) =>
        api('POST /v1/platform/environments/{environmentId}/machines/{machineId}/secret', { params: { environmentId, machineId } }),
    },
    roles: {
      list: (environmentId: string) => api('GET /v1/platform/environments/{environmentId}/roles', { params: { environmentId } }),
      create: (environmentId: string, body: CreateRoleBody) =>
        api('POST /v1/platform/environments/{environmentId}/roles', { params: { environmentId }, body }),
      remove: (environmentId: string, roleKey: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/roles/{roleKey}', { params: { environmentId, roleKey } }),
    },
    emails: {
      /** Newest first, a page at a time; to one recipient if `to` is given (an empty `to` is no filter). */
      list: (environmentId: string, query: EmailListQuery) =>
        api('GET /v1/platform/environments/{environmentId}/emails', {
          params: { environmentId },
          query: { ...query, to: query.to || undefined },
        }),
    },
    webhooks: {
      list: (environmentId: string) =>
        api('GET /v1/platform/environments/{environmentId}/webhook-endpoints', { params: { environmentId } }),
      create: (environmentId: string, body: CreateWebhookEndpointBody) =>
        api('POST /v1/platform/environments/{environmentId}/webhook-endpoints', { params: { environmentId }, body }),
      get: (environmentId: string, endpointId: string) =>
        api('GET /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}', { params: { environmentId, endpointId } }),
      setEnabled: (environmentId: string, endpointId: string, enabled: boolean) =>
        api('PATCH /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}', {
          params: { environmentId, endpointId },
          body: { enabled },
        }),
      remove: (environmentId: string, endpointId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}', { params: { environmentId, endpointId } }),
      rotateSecret: (environmentId: string, endpointId: string) =>
        api('POST /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}/rotate-secret', {
          params: { environmentId, endpointId },
        }),
      deliveries: (environmentId: string, endpointId: string, query: PageQuery) =>
        api('GET /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}/deliveries', {
          params: { environmentId, endpointId },
          query,
        }),
      retry: (environmentId: string, endpointId: string, deliveryId: string) =>
        api('POST /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry', {
          params: { environmentId, endpointId, deliveryId },
        }),
    },
    sso: {
      list: (environmentId: string) => api('GET /v1/platform/environments/{environmentId}/sso-connections', { params: { environmentId } }),
      create: (environmentId: string, body: CreateSsoConnectionBody) =>
        api('POST /v1/platform/environments/{environmentId}/sso-connections', { params: { environmentId }, body }),
      remove: (environmentId: string, connectionId: string) =>
        api('DELETE /v1/platform/environments/{environmentId}/sso-connections/{connectionId}', { params: { environmentId, connectionId } }),
    },
    operators: {
      list: (query: PageQuery) => api('GET /v1/platform/operators', { query }),
      invite: (email: string) => api('POST /v1/platform/operators/invitations', { body: { email } }),
      remove: (userId: string) => api('DELETE /v1/platform/operators/{userId}', { params: { userId } }),
    },
    auditLog: (query: PageQuery) => api('GET /v1/platform/audit-log', { query }),
  };
}

export type Platform = ReturnType<typeof createPlatform>;
