import { Type, type Static } from 'typebox';
import { Page } from './lists.js';
import { OrganizationSummary } from './organizations.js';
import { define } from './registry.js';
import { SessionTokens } from './sessions.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const User = define(
  'User',
  Type.Object({
    id: Type.String({ description: 'user_…' }),
    email: Type.String(),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    username: Nullable(Type.String()),
    imageUrl: Nullable(Type.String()),
    passwordEnabled: Type.Boolean({ description: 'Whether the user has a password' }),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  }),
);
export type User = Static<typeof User>;

export const UserPage = Page('UserPage', User);
export type UserPage = Static<typeof UserPage>;

/** The user as the sign-up and sign-in answers name them. */
export const AuthUser = define('AuthUser', Type.Object({ id: Type.String(), email: Type.String() }));
export type AuthUser = Static<typeof AuthUser>;

/** Sign-up, sign-in and every email flow that ends signed in. */
export const SignedIn = define('SignedIn', Type.Object({ user: AuthUser, session: SessionTokens }));
export type SignedIn = Static<typeof SignedIn>;

export const PasswordChanged = define('PasswordChanged', Type.Object({ changed: Type.Boolean(), otherSessionsRevoked: Type.Integer() }));
export type PasswordChanged = Static<typeof PasswordChanged>;

export const SessionsRevoked = define(
  'SessionsRevoked',
  Type.Object({ revoked: Type.Integer({ description: 'How many live sessions were revoked' }) }),
);
export type SessionsRevoked = Static<typeof SessionsRevoked>;

/** GET /v1/me: the user, their organizations, and the organization the session acts as. */
export const Me = define(
  'Me',
  Type.Object({
    user: User,
    organizations: Type.Array(OrganizationSummary),
    organization: Type.Union([OrganizationSummary, Type.Null()]),
  }),
);
export type Me = Static<typeof Me>;
