/**
 * The resources of the secret-key API, as the server's route schemas define them.
 *
 * These shapes are not in @gatehouse/contract yet. This file is their ONE place in the SDK: when the
 * contract exports them, replace each interface below by a re-export of the contract's type (the
 * client imports them from here only), and the compiler points at every difference.
 */

/** A user (`GET /v1/users/{userId}`). */
export interface User {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  username: string | null;
  imageUrl: string | null;
  passwordEnabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** An organization (`GET /v1/organizations/{organizationId}`). */
export interface Organization {
  id: string;
  name: string;
  slug: string;
  imageUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A member of an organization. */
export interface Member {
  userId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  imageUrl: string | null;
  role: string;
  /** When they joined. */
  createdAt: number;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** An organization invitation. */
export interface Invitation {
  id: string;
  organizationId: string;
  email: string;
  role: string;
  status: InvitationStatus;
  expiresAt: number;
  createdAt: number;
}

/** One page of a list. `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Deleted {
  id: string;
  deleted: true;
}

export interface MemberRemoval {
  organizationId: string;
  userId: string;
  removed: true;
}

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
}

export interface OrganizationListParams extends PageParams {
  /** Case-insensitive text in the name or slug. */
  query?: string;
}

export interface ProfileFields {
  firstName?: string | null;
  lastName?: string | null;
  username?: string | null;
  imageUrl?: string | null;
}

export interface CreateUserParams extends ProfileFields {
  email: string;
  /** Without one, the user signs in by another method (magic link, email code, SSO). */
  password?: string;
}

export interface UpdateUserParams extends ProfileFields {
  email?: string;
  password?: string;
}

export interface CreateOrganizationParams {
  name: string;
  slug?: string;
  imageUrl?: string | null;
  /** A user id, who becomes the organization's first owner. */
  ownerId: string;
}

export interface UpdateOrganizationParams {
  name?: string;
  slug?: string;
  imageUrl?: string | null;
}

/** Exactly one of `userId` or `email` (of an existing account); `role` defaults to `member`. */
export type AddMemberParams = ({ userId: string; email?: never } | { email: string; userId?: never }) & { role?: string };

export interface CreateInvitationParams {
  email: string;
  role: string;
  /** Where the emailed link leads; it gets a `token` query parameter. */
  redirectUrl?: string;
  /** Default 7. */
  expiresInDays?: number;
}

export interface InvitationListParams {
  status?: InvitationStatus;
}
