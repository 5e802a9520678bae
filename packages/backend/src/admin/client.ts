import { PageList } from './page-list.js';
import { Transport, type RetryOptions } from './transport.js';
import type { RouteParams, SecretKeyRoutes, VerifiedApiKey } from '@gatehouse/contract';
import type {
  ApiKey,
  ApiKeyListParams,
  CreateApiKeyParams,
  CreatedApiKey,
  CreateMachineParams,
  CreateActorTokenParams,
  ActorToken,
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
  SessionsRevoked,
  PageParams,
  UpdateDomainParams,
  UpdateOrganizationParams,
  UpdateMemberParams,
  UpdateUserMetadataParams,
  UpdateUserParams,
  User,
  UserListParams,
  Passkey,
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

/** The listing routes: GET routes whose answer is `{data: [...]}` (paged or whole). */
type ListRoute = {
  [K in keyof SecretKeyRoutes]: K extends `GET ${string}`
    ? SecretKeyRoutes[K]['response'] extends { data: unknown[] }
      ? K
      : never
    : never;
}[keyof SecretKeyRoutes];
type ListItem<K extends ListRoute> = SecretKeyRoutes[K]['response'] extends { data: Array<infer Item> } ? Item : never;
type ListQuery<K extends ListRoute> = SecretKeyRoutes[K] extends { query: infer Query } ? Query : Record<never, never>;
/** A listing's call, whatever its route: `list` has checked the route's parameters and query by type. */
type ListCall = (
  route: ListRoute,
  input: { params: Record<string, string>; query: object },
) => Promise<{ data: never[]; nextCursor?: string | null }>;

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

  /**
   * A listing as a PageList: its pages fetched by cursor. A listing the server answers whole (no
   * `nextCursor`) is one page.
   */
  function list<K extends ListRoute>(route: K, params: RouteParams<K>, options: ListQuery<K> & { cursor?: string | undefined }) {
    const { cursor, ...query } = options;
    return new PageList<ListItem<K>>(async (next) => {
      const page: { data: ListItem<K>[]; nextCursor?: string | null } = await (http.request as ListCall)(route, {
        params,
        query: { ...query, cursor: next },
      });
      return { data: page.data, nextCursor: page.nextCursor ?? null };
    }, cursor);
  }

  return {
    users: {
      list: (params: UserListParams = {}): PageList<User> => list('GET /v1/users', {}, params),
      get: (userId: string): Promise<User> => http.request('GET /v1/users/{userId}', { params: { userId } }),
      create: (params: CreateUserParams): Promise<User> => http.request('POST /v1/users', { body: params }),
      /**
       * Creates up to 1,000 users in one call (passwordDigest + passwordHasher carry passwords from
       * another system). Rows succeed or fail on their own; a row whose externalId exists answers
       * that user with `created: false`, so sending a batch again is safe.
       */
      importUsers: (params: ImportUsersParams): Promise<ImportUsersResponse> => http.request('POST /v1/users/import', { body: params }),
      update: (userId: string, params: UpdateUserParams): Promise<User> =>
        http.request('PATCH /v1/users/{userId}', { params: { userId }, body: params }),
      /** Deletes the user and revokes their sessions; refused (403) while they are an organization's last owner. */
      delete: (userId: string): Promise<Deleted> => http.request('DELETE /v1/users/{userId}', { params: { userId } }),
      /** Revokes every session: refresh tokens stop at once; access tokens still verify offline until they expire. */
      revokeSessions: (userId: string): Promise<SessionsRevoked> =>
        http.request('POST /v1/users/{userId}/sessions/revoke', { params: { userId } }),
      /** Revokes every session at once; every sign-in then answers 403 user_banned. */
      /** Deep-merges into the stored metadata; a null value removes its key. `update` replaces whole objects. */
      updateMetadata: (userId: string, params: UpdateUserMetadataParams): Promise<User> =>
        http.request('PATCH /v1/users/{userId}/metadata', { params: { userId }, body: params }),
      ban: (userId: string): Promise<User> => http.request('POST /v1/users/{userId}/ban', { params: { userId } }),
      /** The user's passkeys (names, dates; never keys). */
      listPasskeys: async (userId: string): Promise<Passkey[]> =>
        (await http.request('GET /v1/users/{userId}/passkeys', { params: { userId } })).data,
      /** Removes one passkey at once (a lost device); the user's sessions stay. */
      deletePasskey: (userId: string, passkeyId: string): Promise<Deleted> =>
        http.request('DELETE /v1/users/{userId}/passkeys/{passkeyId}', { params: { userId, passkeyId } }),
      unban: (userId: string): Promise<User> => http.request('POST /v1/users/{userId}/unban', { params: { userId } }),
    },
    organizations: {
      list: (params: OrganizationListParams = {}): PageList<Organization> => list('GET /v1/organizations', {}, params),
      get: (organizationId: string): Promise<Organization> =>
        http.request('GET /v1/organizations/{organizationId}', { params: { organizationId } }),
      create: (params: CreateOrganizationParams): Promise<Organization> => http.request('POST /v1/organizations', { body: params }),
      update: (organizationId: string, params: UpdateOrganizationParams): Promise<Organization> =>
        http.request('PATCH /v1/organizations/{organizationId}', { params: { organizationId }, body: params }),
      delete: (organizationId: string): Promise<Deleted> =>
        http.request('DELETE /v1/organizations/{organizationId}', { params: { organizationId } }),
    },
    members: {
      list: (organizationId: string, params: PageParams = {}): PageList<Member> =>
        list('GET /v1/organizations/{organizationId}/members', { organizationId }, params),
      get: (organizationId: string, userId: string): Promise<Member> =>
        http.request('GET /v1/organizations/{organizationId}/members/{userId}', { params: { organizationId, userId } }),
      /** Adds an existing account; an email with no account is refused (invite them instead). */
      add: (organizationId: string, params: AddMemberParams): Promise<Member> =>
        http.request('POST /v1/organizations/{organizationId}/members', { params: { organizationId }, body: params }),
      /** Changes a member's role; the last owner cannot be demoted. */
      update: (organizationId: string, userId: string, params: UpdateMemberParams): Promise<Member> =>
        http.request('PATCH /v1/organizations/{organizationId}/members/{userId}', { params: { organizationId, userId }, body: params }),
      /** Removes a member; the last owner cannot be removed. */
      remove: (organizationId: string, userId: string): Promise<MemberRemoval> =>
        http.request('DELETE /v1/organizations/{organizationId}/members/{userId}', { params: { organizationId, userId } }),
    },
    invitations: {
      create: (organizationId: string, params: CreateInvitationParams): Promise<Invitation> =>
        http.request('POST /v1/organizations/{organizationId}/invitations', { params: { organizationId }, body: params }),
      list: (organizationId: string, params: InvitationListParams = {}): PageList<Invitation> =>
        list('GET /v1/organizations/{organizationId}/invitations', { organizationId }, params),
      revoke: (organizationId: string, invitationId: string): Promise<Invitation> =>
        http.request('POST /v1/organizations/{organizationId}/invitations/{invitationId}/revoke', {
          params: { organizationId, invitationId },
        }),
    },
    apiKeys: {
      /** A key for a user or an organization; `secret` (gh_ak_…) is in this answer only. */
      create: (params: CreateApiKeyParams): Promise<CreatedApiKey> => http.request('POST /v1/api-keys', { body: params }),
      list: (params: ApiKeyListParams = {}): PageList<ApiKey> => list('GET /v1/api-keys', {}, params),
      /** Revokes the key on every Gatehouse node at once (SDK caches of verifyApiKey: see its cacheTtlMs). */
      revoke: (keyId: string): Promise<Deleted> => http.request('DELETE /v1/api-keys/{keyId}', { params: { keyId } }),
      /** Asks Gatehouse, uncached; a refused key is a GatehouseApiError 401. verifyApiKey caches. */
      verify: (secret: string): Promise<VerifiedApiKey> => http.request('POST /v1/api-keys/verify', { body: { secret } }),
    },
    actorTokens: {
      /**
       * A one-time token to sign in as `userId`, acted by `actor.sub` (impersonation): redeem it with
       * POST /v1/auth/actor-token or open its `url` (the hosted page). `token` is in this answer only.
       */
      create: (params: CreateActorTokenParams): Promise<ActorToken> => http.request('POST /v1/actor-tokens', { body: params }),
    },
    machines: {
      /** A machine (OAuth client): `clientSecret` (gh_mch_…) is in this answer only. */
      create: (params: CreateMachineParams): Promise<MachineWithSecret> => http.request('POST /v1/machines', { body: params }),
      list: async (): Promise<Machine[]> => (await http.request('GET /v1/machines')).data,
      /** Its secret stops at once; tokens already issued live out their time. */
      delete: (machineId: string): Promise<Deleted> => http.request('DELETE /v1/machines/{machineId}', { params: { machineId } }),
      /** A new secret, in this answer only; the old one stops at once. */
      rotateSecret: (machineId: string): Promise<MachineWithSecret> => http.request('POST /v1/machines/{machineId}/secret', { params: { machineId } }),
    },
    domains: {
      /** Verified at once: the secret key vouches that the organization uses the domain. */
      create: (organizationId: string, params: CreateDomainParams): Promise<OrganizationDomain> =>
        http.request('POST /v1/organizations/{organizationId}/domains', { params: { organizationId }, body: params }),
      list: (organizationId: string): PageList<OrganizationDomain> =>
        list('GET /v1/organizations/{organizationId}/domains', { organizationId }, {}),
      update: (organizationId: string, domainId: string, params: UpdateDomainParams): Promise<OrganizationDomain> =>
        http.request('PATCH /v1/organizations/{organizationId}/domains/{domainId}', { params: { organizationId, domainId }, body: params }),
      delete: (organizationId: string, domainId: string): Promise<Deleted> =>
        http.request('DELETE /v1/organizations/{organizationId}/domains/{domainId}', { params: { organizationId, domainId } }),
    },
  };
}

export type GatehouseClient = ReturnType<typeof createGatehouseClient>;
