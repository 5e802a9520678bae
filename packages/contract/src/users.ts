import { Type, type Static } from 'typebox';
import { EMAIL_MAX_LENGTH, ImageUrl, Nullable, Password } from './fields.js';
import { Page } from './lists.js';
import { OrganizationSummary } from './organizations.js';
import { define } from './registry.js';
import { SecondFactorNeeded } from './second-factor.js';
import { SessionTokens } from './sessions.js';

/** A JSON object of the application's own data; at most 8 KiB as JSON. */
export const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON object, at most 8 KiB as UTF-8 JSON' });
export type Metadata = Static<typeof Metadata>;

const userFields = {
  id: Type.String({ description: 'user_…' }),
  email: Type.String(),
  emailVerified: Type.Boolean({ description: 'Whether the user proved they receive mail at this address, or an operator said so' }),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  username: Nullable(Type.String()),
  imageUrl: Nullable(Type.String()),
  passwordEnabled: Type.Boolean({ description: 'Whether the user has a password' }),
  banned: Type.Boolean({ description: 'A banned user cannot sign in by any method (POST /v1/users/{id}/ban)' }),
  publicMetadata: { ...Metadata, description: 'Readable by the user, writable with the secret key' },
  unsafeMetadata: { ...Metadata, description: 'Readable and writable by the user (PATCH /v1/me): never trust it for authorization' },
  externalId: Nullable(
    Type.String({ description: 'The user’s id in the system they were imported from, or the application’s own; unique per environment' }),
  ),
  twoFactorEnabled: Type.Boolean({ description: 'Whether the user has a second factor (TOTP or a passkey)' }),
  lastSignInAt: Type.Union([Type.Integer({ description: 'When the user last started a session, by any method (ms since the epoch); null until then' }), Type.Null()]),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
};

/** A user as the secret-key API and webhooks show it. */
export const User = define(
  'User',
  Type.Object({ ...userFields, privateMetadata: { ...Metadata, description: 'Only the secret-key API and webhooks show it' } }),
);
export type User = Static<typeof User>;

/** The user as they see themselves (GET and PATCH /v1/me): without privateMetadata. */
export const SessionUser = define('SessionUser', Type.Object(userFields));
export type SessionUser = Static<typeof SessionUser>;

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
    user: SessionUser,
    organizations: Type.Array(OrganizationSummary),
    organization: Type.Union([OrganizationSummary, Type.Null()]),
  }),
);
export type Me = Static<typeof Me>;

// ---- request bodies

const Email = Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64, description: 'Trimmed; the domain is lowercased' });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const Username = Type.String({ minLength: 1, maxLength: 64 });

/** The profile fields a user or an admin may change: omitted ones are unchanged, null clears. */
const ProfileFields = {
  firstName: Type.Optional(Nullable(Name)),
  lastName: Type.Optional(Nullable(Name)),
  username: Type.Optional(Nullable(Username)),
  imageUrl: Type.Optional(Nullable(ImageUrl)),
};

/** POST /v1/auth/signup */
export const SignUpBody = Type.Object(
  {
    email: Email,
    password: Password,
    firstName: Type.Optional(Name),
    lastName: Type.Optional(Name),
    username: Type.Optional(Username),
  },
  { additionalProperties: false },
);
export type SignUpBody = Static<typeof SignUpBody>;

/** POST /v1/auth/signup when the environment requires a verified email: the code is on its way. */
export const SignUpPending = define(
  'SignUpPending',
  Type.Object({
    status: Type.Literal('verification_required'),
    signUpId: Type.String({ description: 'su_…: pass it with the emailed code to POST /v1/auth/signup/verify' }),
  }),
);
export type SignUpPending = Static<typeof SignUpPending>;

/** 202 of POST /v1/auth/signup: a code was emailed, or (mfa "required", no verification) a second factor must be set up first. */
export const SignUpStarted = define('SignUpStarted', Type.Union([SignUpPending, SecondFactorNeeded]));
export type SignUpStarted = Static<typeof SignUpStarted>;

/** POST /v1/auth/signup/verify */
export const SignUpVerifyBody = Type.Object(
  { signUpId: Type.String({ minLength: 1, maxLength: 128 }), code: Type.String({ minLength: 1, maxLength: 32 }) },
  { additionalProperties: false },
);
export type SignUpVerifyBody = Static<typeof SignUpVerifyBody>;

/** POST /v1/auth/signin */
export const SignInBody = Type.Object({ email: Type.String({ maxLength: 1024 }), password: Password }, { additionalProperties: false });
export type SignInBody = Static<typeof SignInBody>;

/** PATCH /v1/me: `unsafeMetadata` replaces the whole object. */
export const ProfileUpdateBody = Type.Object(
  { ...ProfileFields, unsafeMetadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export type ProfileUpdateBody = Static<typeof ProfileUpdateBody>;

/** On POST and PATCH /v1/users each replaces the whole object; PATCH /v1/users/{id}/metadata merges. */
const MetadataFields = {
  publicMetadata: Type.Optional(Metadata),
  privateMetadata: Type.Optional(Metadata),
  unsafeMetadata: Type.Optional(Metadata),
};

/** PATCH /v1/users/{userId}/metadata: deep-merged into the stored objects; a null value removes its key. */
export const UpdateUserMetadataBody = Type.Object(MetadataFields, { additionalProperties: false });
export type UpdateUserMetadataBody = Static<typeof UpdateUserMetadataBody>;

const EmailVerified = Type.Boolean({
  description: 'Whether the address is known to be the user’s (default false; changing the email resets it)',
});

const ExternalId = Type.String({ minLength: 1, maxLength: 255, description: 'Unique per environment; imports are idempotent on it' });

/** The hashers whose digests POST /v1/users and POST /v1/users/import accept (docs/migrating.md). */
export const PasswordHasher = Type.Union(
  [
    Type.Literal('bcrypt'),
    Type.Literal('argon2id'),
    Type.Literal('argon2i'),
    Type.Literal('scrypt_firebase'),
    Type.Literal('pbkdf2_sha256'),
  ],
  { description: 'How passwordDigest was made; the first sign-in rehashes the password to argon2id' },
);
export type PasswordHasher = Static<typeof PasswordHasher>;

/** A TOTP secret from another system: base32 (RFC 4648; case, spaces and `=` padding ignored), 80 to 512 bits. */
export const TotpSecret = Type.String({
  minLength: 16,
  maxLength: 160,
  pattern: '^[A-Za-z2-7 =]+$',
  description: 'A TOTP secret in base32 (RFC 6238, SHA-1, 6 digits, 30 s): the user has TOTP enabled with it; no backup codes are made',
});

/** POST /v1/users: without a password, the user signs in by another method. */
export const CreateUserBody = Type.Object(
  {
    email: Email,
    password: Type.Optional(Password),
    passwordDigest: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'A digest from another system, instead of password; needs passwordHasher',
      }),
    ),
    passwordHasher: Type.Optional(PasswordHasher),
    emailVerified: Type.Optional(EmailVerified),
    externalId: Type.Optional(ExternalId),
    createdAt: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 8_640_000_000_000_000,
        description: 'When the user was created in the system they come from (ms since epoch)',
      }),
    ),
    totpSecret: Type.Optional(TotpSecret),
    ...ProfileFields,
    ...MetadataFields,
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

/** POST /v1/users/import: up to 1,000 users, each as POST /v1/users takes it. */
export const IMPORT_MAX_USERS = 1000;
export const ImportUsersBody = Type.Object(
  {
    users: Type.Array(Type.Unknown(), {
      description: `Up to ${IMPORT_MAX_USERS} bodies of POST /v1/users; each row is checked on its own`,
    }),
  },
  { additionalProperties: false },
);
export type ImportUsersBody = { users: CreateUserBody[] };

/** One row's result: the user (created now, or found by its externalId), or the error that row got. */
export const ImportUsersResult = define(
  'ImportUsersResult',
  Type.Object({
    data: Type.Array(
      Type.Union([
        Type.Object({
          index: Type.Integer(),
          user: User,
          created: Type.Boolean({ description: 'false when a user with this externalId already existed (nothing changed)' }),
        }),
        Type.Object({
          index: Type.Integer(),
          error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Optional(Type.Unknown()) }),
        }),
      ]),
    ),
  }),
);
export type ImportUsersResult = Static<typeof ImportUsersResult>;

/** PATCH /v1/users/{userId} */
export const UpdateUserBody = Type.Object(
  {
    email: Type.Optional(Email),
    password: Type.Optional(Password),
    emailVerified: Type.Optional(EmailVerified),
    externalId: Type.Optional(Nullable(ExternalId)),
    ...ProfileFields,
    ...MetadataFields,
  },
  { additionalProperties: false },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;
