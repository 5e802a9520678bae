import { PageList } from './page-list.js';
import { Transport, type RetryOptions } from './transport.js';
import type { VerifiedApiKey } from '@gatehouse/contract';
import type {
  ApiKey,
  ApiKeyListParams,
  CreateApiKeyParams,
  CreatedApiKey,
  CreateMachineParams,
  Machine,
  MachineWithSecret,
  AddMemberParams,
  CreateDomainParams,
  CreateInvitationParams,
  CreateOrganizationParams,
  CreateUserParams,
  Deleted,
  ImportUsersParams,
  ImportUsersResponse,
  Invitation,
  InvitationListParams,
  Member,
  MemberRemoval,
  Organization,
  OrganizationDomain,
  OrganizationListParams,
  Page,
  SessionsRevoked,
  PageParams,
  UpdateDomainParams,
  UpdateOrganizationParams,
  UpdateMemberParams,
  UpdateUserMetadataParams,
  UpdateUserParams,
  User,
  UserListParams,
} from './types.js';

export interface GatehouseClientOptions {
  /** `sk_test_…` or `sk_live_…`. Server side only. */
  secretKey: string;
  /** The server root, e.g. `https://auth.example.com` (no `/v1`). */
  baseUrl: string;
  /** How a 429 is retried: default 2 retries, each after the server's Retry-After, at most 60 s. */
  retry?: RetryOptions;
  /** Per request, in ms; default 30000. */
  timeoutMs?: number;
}

const id = (value: string) => encodeURIComponent(value);

function refuseBrowser(): void {
  const global = globalThis as { window?: unknown; document?: unknown };
  if (typeof global.window !== 'undefined' && typeof global.document !== 'undefined') {
    throw new Error(
      'createGatehouseClient runs on servers only: it holds a secret key, which must never ship to a browser. Call your own backend from the page instead.',
    );
  }
}

function checkOptions(options: GatehouseClientOptions): void {
  if (typeof options?.secretKey !== 'string' || !/^sk_(test|live)_/.test(options.secretKey)) {
    throw new TypeError('createGatehouseClient needs secretKey: an sk_test_… or sk_live_… key (not a publishable key).');
  }
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('createGatehouseClient needs baseUrl: the Gatehouse server root, such as https://auth.example.com.');
  }
  if (/\/v1\/?$/.test(options.baseUrl)) {
    throw new TypeError(`baseUrl is the server root, without /v1: use ${options.baseUrl.replace(/\/v1\/?$/, '')}.`);
  }
}

/**
 * The admin client of one environment, over the secret-key API. Every method returns a promise, or
 * for lists a PageList: `await` it for one page, `for await` it for every item.
 */
export function createGatehouseClient(options: GatehouseClientOptions) {
  refuseBrowser();
  checkOptions(options);
  const http = new Transport(options);

  function list<T>(path: string, params: Record<string, string | number | undefined> & { cursor?: string | undefined }) {
    const { cursor, ...query } = params;
    return new PageList<T>(async (next) => {
      const page = await http.request<Page<T> | { data: T[]; nextCursor?: string | null }>('GET', path, {
        query: { ...query, cursor: next },
      });
      return { data: page.data, nextCursor: page.nextCursor ?? null };
    }, cursor);
  }

  return {
    users: {
      list: (params: UserListParams = {}) => list<User>('/v1/users', { ...params }),
      get: (userId: string) => http.request<User>('GET', `/v1/users/${id(userId)}`),
      create: (params: CreateUserParams) => http.request<User>('POST', '/v1/users', { body: params }),
      /**
       * Creates up to 1,000 users in one call (passwordDigest + passwordHasher carry passwords from
       * another system). Rows succeed or fail on their own; a row whose externalId exists answers
       * that user with `created: false`, so sending a batch again is safe.
       */
      importUsers: (params: ImportUsersParams) => http.request<ImportUsersResponse>('POST', '/v1/users/import', { body: params }),
      update: (userId: string, params: UpdateUserParams) => http.request<User>('PATCH', `/v1/users/${id(userId)}`, { body: params }),
      /** Deletes the user and revokes their sessions; refused (403) while they are an organization's last owner. */
      delete: (userId: string) => http.request<Deleted>('DELETE', `/v1/users/${id(userId)}`),
      /** Revokes every session: refresh tokens stop at once; access tokens still verify offline until they expire. */
      revokeSessions: (userId: string) => http.request<SessionsRevoked>('POST', `/v1/users/${id(userId)}/sessions/revoke`),
      /** Revokes every session at once; every sign-in then answers 403 user_banned. */
      /** Deep-merges into the stored metadata; a null value removes its key. `update` replaces whole objects. */
      updateMetadata: (userId: string, params: UpdateUserMetadataParams) =>
        http.request<User>('PATCH', `/v1/users/${id(userId)}/metadata`, { body: params }),
      ban: (userId: string) => http.request<User>('POST', `/v1/users/${id(userId)}/ban`),
      unban: (userId: string) => http.request<User>('POST', `/v1/users/${id(userId)}/unban`),
    },
    organizations: {
      list: (params: OrganizationListParams = {}) => list<Organization>('/v1/organizations', { ...params }),
      get: (organizationId: string) => http.request<Organization>('GET', `/v1/organizations/${id(organizationId)}`),
      create: (params: CreateOrganizationParams) => http.request<Organization>('POST', '/v1/organizations', { body: params }),
      update: (organizationId: string, params: UpdateOrganizationParams) =>
        http.request<Organization>('PATCH', `/v1/organizations/${id(organizationId)}`, { body: params }),
      delete: (organizationId: string) => http.request<Deleted>('DELETE', `/v1/organizations/${id(organizationId)}`),
    },
    members: {
      list: (organizationId: string, params: PageParams = {}) =>
        list<Member>(`/v1/organizations/${id(organizationId)}/members`, { ...params }),
      get: (organizationId: string, userId: string) =>
        http.request<Member>('GET', `/v1/organizations/${id(organizationId)}/members/${id(userId)}`),
      /** Adds an existing account; an email with no account is refused (invite them instead). */
      add: (organizationId: string, params: AddMemberParams) =>
        http.request<Member>('POST', `/v1/organizations/${id(organizationId)}/members`, { body: params }),
      /** Changes a member's role; the last owner cannot be demoted. */
      update: (organizationId: string, userId: string, params: UpdateMemberParams) =>
        http.request<Member>('PATCH', `/v1/organizations/${id(organizationId)}/members/${id(userId)}`, { body: params }),
      /** Removes a member; the last owner cannot be removed. */
      remove: (organizationId: string, userId: string) =>
        http.request<MemberRemoval>('DELETE', `/v1/organizations/${id(organizationId)}/members/${id(userId)}`),
    },
    invitations: {
      create: (organizationId: string, params: CreateInvitationParams) =>
        http.request<Invitation>('POST', `/v1/organizations/${id(organizationId)}/invitations`, { body: params }),
      list: (organizationId: string, params: InvitationListParams = {}) =>
        list<Invitation>(`/v1/organizations/${id(organizationId)}/invitations`, { ...params }),
      revoke: (organizationId: string, invitationId: string) =>
        http.request<Invitation>('POST', `/v1/organizations/${id(organizationId)}/invitations/${id(invitationId)}/revoke`),
    },
    apiKeys: {
      /** A key for a user or an organization; `secret` (gh_ak_…) is in this answer only. */
      create: (params: CreateApiKeyParams) => http.request<CreatedApiKey>('POST', '/v1/api-keys', { body: params }),
      list: (params: ApiKeyListParams = {}) => list<ApiKey>('/v1/api-keys', { ...params }),
      /** Revokes the key on every Gatehouse node at once (SDK caches of verifyApiKey: see its cacheTtlMs). */
      revoke: (keyId: string) => http.request<Deleted>('DELETE', `/v1/api-keys/${id(keyId)}`),
      /** Asks Gatehouse, uncached; a refused key is a GatehouseApiError 401. verifyApiKey caches. */
      verify: (secret: string) => http.request<VerifiedApiKey>('POST', '/v1/api-keys/verify', { body: { secret } }),
    },
    machines: {
      /** A machine (OAuth client): `clientSecret` (gh_mch_…) is in this answer only. */
      create: (params: CreateMachineParams) => http.request<MachineWithSecret>('POST', '/v1/machines', { body: params }),
      list: async () => (await http.request<{ data: Machine[] }>('GET', '/v1/machines')).data,
      /** Its secret stops at once; tokens already issued live out their time. */
      delete: (machineId: string) => http.request<Deleted>('DELETE', `/v1/machines/${id(machineId)}`),
      /** A new secret, in this answer only; the old one stops at once. */
      rotateSecret: (machineId: string) => http.request<MachineWithSecret>('POST', `/v1/machines/${id(machineId)}/secret`),
    },
    domains: {
      /** Verified at once: the secret key vouches that the organization uses the domain. */
      create: (organizationId: string, params: CreateDomainParams) =>
        http.request<OrganizationDomain>('POST', `/v1/organizations/${id(organizationId)}/domains`, { body: params }),
      list: (organizationId: string) => list<OrganizationDomain>(`/v1/organizations/${id(organizationId)}/domains`, {}),
      update: (organizationId: string, domainId: string, params: UpdateDomainParams) =>
        http.request<OrganizationDomain>('PATCH', `/v1/organizations/${id(organizationId)}/domains/${id(domainId)}`, { body: params }),
      delete: (organizationId: string, domainId: string) =>
        http.request<Deleted>('DELETE', `/v1/organizations/${id(organizationId)}/domains/${id(domainId)}`),
    },
  };
}

export type GatehouseClient = ReturnType<typeof createGatehouseClient>;
