/**
 * The resources and request bodies of the secret-key API: the contract's own types
 * (@gatehouse/contract), which the server's route schemas are made of. Nothing here is written by
 * hand, so a change of a server schema is a type error in this SDK until it follows.
 */
import type {
  CreateApiKeyBody,
  CreateMachineBody,
  AddMemberBody,
  CreateDomainBody,
  CreateInvitationBody,
  CreateOrganizationBody,
  CreateUserBody,
  ImportUsersResult,
  InvitationStatus,
  MemberRemoved,
  RoleBody,
  UpdateDomainBody,
  UpdateOrganizationBody,
  UpdateUserBody,
  UpdateUserMetadataBody,
  UserPage,
  CreateActorTokenBody,
} from '@gatehouse/contract';

export type {
  ActorToken,
  ApiKey,
  CreatedApiKey,
  Passkey,
  Machine,
  MachineToken,
  MachineWithSecret,
  Deleted,
  EnrollmentMode,
  Invitation,
  InvitationStatus,
  Member,
  Organization,
  OrganizationDomain,
  PasswordHasher,
  SessionsRevoked,
  User,
} from '@gatehouse/contract';

/** One page of a list. `nextCursor` is null on the last page. */
export type Page<T> = { data: T[]; nextCursor: UserPage['nextCursor'] };

export type MemberRemoval = MemberRemoved;

export type CreateUserParams = CreateUserBody;
/** POST /v1/users/import: up to 1,000 users, each as `users.create` takes it. */
export type ImportUsersParams = { users: CreateUserBody[] };
/** One result per row, in order: `{index, user, created}` or `{index, error}`. */
export type ImportUsersResponse = ImportUsersResult;
export type ImportUserRow = ImportUsersResult['data'][number];
export type UpdateUserParams = UpdateUserBody;
export type UpdateUserMetadataParams = UpdateUserMetadataBody;
export type CreateOrganizationParams = CreateOrganizationBody;
export type UpdateOrganizationParams = UpdateOrganizationBody;
/** The server takes exactly one of `userId` or `email` (of an existing account); `role` defaults to `member`. */
export type AddMemberParams = AddMemberBody & ({ userId: string; email?: never } | { email: string; userId?: never });
export type UpdateMemberParams = RoleBody;
export type CreateInvitationParams = CreateInvitationBody;
export type CreateDomainParams = CreateDomainBody;
export type UpdateDomainParams = UpdateDomainBody;

// The query parameters of the list routes: what the client puts in the URL.

export interface PageParams {
  /** 1–100, default 20. When iterating, the size of each page fetched. */
  limit?: number;
  cursor?: string;
}

export interface UserListParams extends PageParams {
  /** An exact address. */
  email?: string;
  /** Case-insensitive text in the email, names or username. */
  query?: string;
  /** An exact externalId: the user's id in the system they were imported from. */
  externalId?: string;
}

export interface OrganizationListParams extends PageParams {
  /** Case-insensitive text in the name or slug. */
  query?: string;
}

export interface InvitationListParams {
  status?: InvitationStatus;
}

/** POST /v1/api-keys: `subject` is a user (`user_…`) or an organization (`org_…`) of the environment. */
export type CreateApiKeyParams = CreateApiKeyBody;
export interface ApiKeyListParams extends PageParams {
  /** Only this subject's keys. */
  subject?: string;
}
export type CreateMachineParams = CreateMachineBody;
/** POST /v1/actor-tokens: `expiresInSeconds` defaults to 600, at most 3600. */
export type CreateActorTokenParams = CreateActorTokenBody;
