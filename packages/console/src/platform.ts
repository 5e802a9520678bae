import type {
  AuditLogPage,
  CreatedProject,
  CreatedSecretKey,
  CreatedWebhookEndpoint,
  Deleted,
  Invitation,
  InvitationList,
  Member,
  MemberPage,
  MemberRemoved,
  Organization,
  OperatorInvitation,
  OperatorPage,
  OrganizationPage,
  OutboxEmailList,
  PlatformEnvironment,
  Project,
  ProjectLogo,
  ProjectPage,
  ProjectUsage,
  RequestRate,
  Role,
  RoleList,
  SecretKeyList,
  SessionList,
  SessionsRevoked,
  SigningKey,
  SigningKeyList,
  SsoConnection,
  User,
  UserIdentityList,
  UserPage,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookSecret,
} from '@gatehouse/contract';
import type { Api } from './api.js';

/** One page of a cursor-paged listing: `nextCursor` goes back as `cursor` for the next; null on the last. */
export interface Paged<T> {
  data: T[];
  nextCursor: string | null;
}

/** Which page of a paged listing: the platform API takes at most 100 rows a page. */
export interface PageQuery {
  limit?: number;
  cursor?: string | undefined;
}

// Bodies the contract does not describe yet (the server's own schemas); each as the console sends it.
export type CreateProjectBody = { name: string; domain?: string };
export type UpdateEnvironmentBody = Partial<
  Pick<
    PlatformEnvironment,
    | 'authMethods'
    | 'signUp'
    | 'domain'
    | 'callbackOrigins'
    | 'rateLimitPerMinute'
    | 'tokenAlgorithm'
    | 'accessTokenTtlSeconds'
    | 'sessionLifetimeSeconds'
    | 'sessionInactivitySeconds'
    | 'emailVerification'
    | 'usersCanCreateOrganizations'
  >
>;
export type CreateWebhookEndpointBody = { url: string; eventTypes?: string[]; description?: string };
export type CreateRoleBody = { key: string; name: string; permissions: string[] };
export type CreateSsoConnectionBody =
  | { type: 'saml'; name: string; domains: string[]; idpMetadataXml: string }
  | {
      type: 'oidc';
      preset?: 'google' | 'github' | 'microsoft' | 'gitlab' | 'discord' | 'linkedin';
      name: string;
      domains: string[];
      issuer?: string;
      clientId: string;
      clientSecret: string;
    }
  | { type: 'oidc'; preset: 'apple'; name: string; domains: string[]; clientId: string; teamId: string; keyId: string; privateKey: string };

const PLATFORM = '/v1/platform';

/** A path from its segments, each one encoded (ids come from URLs the operator can edit). */
function path(...segments: string[]): string {
  return [PLATFORM, ...segments.map(encodeURIComponent)].join('/');
}

/** The query string of the given values; undefined and empty ones are left out. */
function withQuery(to: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${to}?${text}` : to;
}

/**
 * The platform API as typed functions: the console's only way to `/v1/platform/…`, so no page builds
 * a path by hand. Each function is one route; ids are encoded here.
 */
export function createPlatform(api: Api) {
  const env = (environmentId: string, ...rest: string[]) => path('environments', environmentId, ...rest);
  const user = (environmentId: string, userId: string, ...rest: string[]) => env(environmentId, 'users', userId, ...rest);
  const org = (environmentId: string, organizationId: string, ...rest: string[]) =>
    env(environmentId, 'organizations', organizationId, ...rest);
  const hook = (environmentId: string, endpointId: string, ...rest: string[]) =>
    env(environmentId, 'webhook-endpoints', endpointId, ...rest);
  return {
    projects: {
      list: (query: PageQuery) => api<ProjectPage>('GET', withQuery(path('projects'), { ...query })),
      create: (body: CreateProjectBody) => api<CreatedProject>('POST', path('projects'), body),
      get: (projectId: string) => api<Project>('GET', path('projects', projectId)),
      rename: (projectId: string, name: string) => api<Project>('PATCH', path('projects', projectId), { name }),
      remove: (projectId: string) => api<void>('DELETE', path('projects', projectId)),
      uploadLogo: (projectId: string, image: Blob) => api<ProjectLogo>('PUT', path('projects', projectId, 'logo'), image),
      removeLogo: (projectId: string) => api<void>('DELETE', path('projects', projectId, 'logo')),
      usage: (projectId: string, month: string) => api<ProjectUsage>('GET', withQuery(path('projects', projectId, 'usage'), { month })),
      requests: (projectId: string) => api<RequestRate>('GET', path('projects', projectId, 'requests')),
    },
    environments: {
      update: (environmentId: string, body: UpdateEnvironmentBody) => api<PlatformEnvironment>('PATCH', env(environmentId), body),
    },
    secretKeys: {
      list: (environmentId: string) => api<SecretKeyList>('GET', env(environmentId, 'secret-keys')),
      create: (environmentId: string) => api<CreatedSecretKey>('POST', env(environmentId, 'secret-keys')),
      revoke: (environmentId: string, keyId: string) => api<void>('DELETE', env(environmentId, 'secret-keys', keyId)),
    },
    signingKeys: {
      list: (environmentId: string) => api<SigningKeyList>('GET', env(environmentId, 'signing-keys')),
      rotate: (environmentId: string) => api<SigningKey>('POST', env(environmentId, 'signing-keys', 'rotate')),
      revoke: (environmentId: string, kid: string) => api<SigningKey>('POST', env(environmentId, 'signing-keys', kid, 'revoke')),
    },
    users: {
      list: (environmentId: string, query: PageQuery & { query?: string }) =>
        api<UserPage>('GET', withQuery(env(environmentId, 'users'), { ...query })),
      get: (environmentId: string, userId: string) => api<User>('GET', user(environmentId, userId)),
      remove: (environmentId: string, userId: string) => api<Deleted>('DELETE', user(environmentId, userId)),
      ban: (environmentId: string, userId: string) => api<User>('POST', user(environmentId, userId, 'ban')),
      unban: (environmentId: string, userId: string) => api<User>('POST', user(environmentId, userId, 'unban')),
      sessions: (environmentId: string, userId: string) => api<SessionList>('GET', user(environmentId, userId, 'sessions')),
      revokeSession: (environmentId: string, userId: string, sessionId: string) =>
        api<void>('DELETE', user(environmentId, userId, 'sessions', sessionId)),
      revokeSessions: (environmentId: string, userId: string) =>
        api<SessionsRevoked>('POST', user(environmentId, userId, 'sessions', 'revoke')),
      identities: (environmentId: string, userId: string) => api<UserIdentityList>('GET', user(environmentId, userId, 'identities')),
      unlinkIdentity: (environmentId: string, userId: string, identityId: string) =>
        api<void>('DELETE', user(environmentId, userId, 'identities', identityId)),
    },
    organizations: {
      list: (environmentId: string, query: PageQuery) =>
        api<OrganizationPage>('GET', withQuery(env(environmentId, 'organizations'), { ...query })),
      get: (environmentId: string, organizationId: string) => api<Organization>('GET', org(environmentId, organizationId)),
      members: (environmentId: string, organizationId: string, query: PageQuery) =>
        api<MemberPage>('GET', withQuery(org(environmentId, organizationId, 'members'), { ...query })),
      setRole: (environmentId: string, organizationId: string, userId: string, role: string) =>
        api<Member>('PATCH', org(environmentId, organizationId, 'members', userId), { role }),
      removeMember: (environmentId: string, organizationId: string, userId: string) =>
        api<MemberRemoved>('DELETE', org(environmentId, organizationId, 'members', userId)),
      pendingInvitations: (environmentId: string, organizationId: string) =>
        api<InvitationList>('GET', withQuery(org(environmentId, organizationId, 'invitations'), { status: 'pending' })),
      invite: (environmentId: string, organizationId: string, body: { email: string; role: string }) =>
        api<Invitation>('POST', org(environmentId, organizationId, 'invitations'), body),
      revokeInvitation: (environmentId: string, organizationId: string, invitationId: string) =>
        api<Invitation>('POST', org(environmentId, organizationId, 'invitations', invitationId, 'revoke')),
    },
    roles: {
      list: (environmentId: string) => api<RoleList>('GET', env(environmentId, 'roles')),
      create: (environmentId: string, body: CreateRoleBody) => api<Role>('POST', env(environmentId, 'roles'), body),
      remove: (environmentId: string, key: string) => api<void>('DELETE', env(environmentId, 'roles', key)),
    },
    emails: {
      /** The newest `limit` (at most 100), to one recipient if `to` is given: this listing has no cursor. */
      list: (environmentId: string, query: { limit: number; to?: string }) =>
        api<OutboxEmailList>('GET', withQuery(env(environmentId, 'emails'), { ...query })),
    },
    webhooks: {
      list: (environmentId: string) => api<WebhookEndpointList>('GET', env(environmentId, 'webhook-endpoints')),
      create: (environmentId: string, body: CreateWebhookEndpointBody) =>
        api<CreatedWebhookEndpoint>('POST', env(environmentId, 'webhook-endpoints'), body),
      get: (environmentId: string, endpointId: string) => api<WebhookEndpoint>('GET', hook(environmentId, endpointId)),
      setEnabled: (environmentId: string, endpointId: string, enabled: boolean) =>
        api<WebhookEndpoint>('PATCH', hook(environmentId, endpointId), { enabled }),
      remove: (environmentId: string, endpointId: string) => api<Deleted>('DELETE', hook(environmentId, endpointId)),
      rotateSecret: (environmentId: string, endpointId: string) =>
        api<WebhookSecret>('POST', hook(environmentId, endpointId, 'rotate-secret')),
      deliveries: (environmentId: string, endpointId: string, query: PageQuery) =>
        api<WebhookDeliveryPage>('GET', withQuery(hook(environmentId, endpointId, 'deliveries'), { ...query })),
      retry: (environmentId: string, endpointId: string, deliveryId: string) =>
        api<WebhookDelivery>('POST', hook(environmentId, endpointId, 'deliveries', deliveryId, 'retry')),
    },
    sso: {
      list: (environmentId: string) => api<{ data: SsoConnection[] }>('GET', env(environmentId, 'sso-connections')),
      create: (environmentId: string, body: CreateSsoConnectionBody) =>
        api<SsoConnection>('POST', env(environmentId, 'sso-connections'), body),
      remove: (environmentId: string, connectionId: string) => api<Deleted>('DELETE', env(environmentId, 'sso-connections', connectionId)),
    },
    operators: {
      list: (query: PageQuery) => api<OperatorPage>('GET', withQuery(path('operators'), { ...query })),
      invite: (email: string) => api<OperatorInvitation>('POST', path('operators', 'invitations'), { email }),
      remove: (userId: string) => api<void>('DELETE', path('operators', userId)),
    },
    auditLog: (query: PageQuery) => api<AuditLogPage>('GET', withQuery(path('audit-log'), { ...query })),
  };
}

export type Platform = ReturnType<typeof createPlatform>;
