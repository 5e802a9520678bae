// moves to @gatehouse/contract: these resource shapes mirror the server's route schemas
// (packages/server/src/*/routes.ts) until the contract package exports them; then this file
// re-exports the contract's types instead.

/** GET /v1/me `user`, PATCH /v1/me. */
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

/** The `user` of a sign-in or sign-up answer. */
export interface AuthUser {
  id: string;
  email: string;
}

/** The `session` of a sign-in, sign-up, refresh or switch-organization answer. */
export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  tokenType: 'Bearer';
}

/** An organization as GET /v1/me shows it: with the caller's role. */
export interface OrganizationSummary {
  id: string;
  name: string;
  slug: string;
  role: string;
  imageUrl: string | null;
}

/** GET/PATCH /v1/me/organization, GET/POST /v1/me/organizations. */
export interface UserOrganization {
  id: string;
  name: string;
  slug: string;
  imageUrl: string | null;
  createdAt: number;
  updatedAt: number;
  role: string;
  permissions: string[];
}

export interface Member {
  userId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  imageUrl: string | null;
  role: string;
  createdAt: number;
}

/** GET /v1/me/sessions */
export interface SessionView {
  id: string;
  createdAt: number;
  lastActiveAt: number;
  expiresAt: number;
  userAgent: string | null;
  current: boolean;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** POST /v1/me/assets/upload-url */
export interface UploadTicket {
  uploadUrl?: string;
  uploadHeaders?: Record<string, string>;
  publicUrl: string;
  alreadyExists: boolean;
}

export type UploadPurpose = 'user_avatar' | 'organization_image';

/** GET /v1/environment */
export interface EnvironmentInfo {
  id: string;
  type: 'development' | 'production';
  rateLimit: { requestsPerMinute: number };
  authMethods: { password: boolean; magicLink: boolean; emailCode: boolean; sso: boolean };
  signUp: boolean;
}
