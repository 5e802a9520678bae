import type { ImageUrlCheck } from '../assets/image-url.js';
import { isUniqueViolation } from '../db/index.js';
import { ApiError, apiError } from '../lib/errors.js';
import { newId } from '../lib/crypto.js';
import { base32Decode } from '../lib/base32.js';
import type { Environment } from '../tenancy/settings.js';
import { emailKey, normalizeEmail } from './email.js';
import { metadataText } from './metadata.js';
import { assertAcceptablePassword } from './password-policy.js';
import { assertBcryptAvailable, storedDigest, type PasswordHasher } from './password-digests.js';
import { hashPassword } from './passwords.js';
import type { UserRow } from './queries.js';

/**
 * What creating or changing a user takes, and the checks and conversions that need no database
 * (the image URL rule, which may look at uploads, is passed in).
 */

export interface ProfileInput {
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  username?: string | null | undefined;
  imageUrl?: string | null | undefined;
}

export interface MetadataInput {
  publicMetadata?: Record<string, unknown> | undefined;
  privateMetadata?: Record<string, unknown> | undefined;
  unsafeMetadata?: Record<string, unknown> | undefined;
}

export interface AdminUserInput extends ProfileInput, MetadataInput {
  email?: string | undefined;
  password?: string | undefined;
  emailVerified?: boolean | undefined;
  externalId?: string | null | undefined;
}

/** POST /v1/users and the bulk import: also a digest from another system, and the original creation time. */
export interface CreateUserInput extends AdminUserInput {
  email: string;
  passwordDigest?: string | undefined;
  passwordHasher?: PasswordHasher | undefined;
  createdAt?: number | undefined;
  /** A TOTP secret from another system (base32): the user starts with TOTP enabled (mfa/). */
  totpSecret?: string | undefined;
}

/** A new user's fields: what POST /v1/users, an import row, a sign-up or an invitation gives. */
export type NewUserInput = ProfileInput &
  MetadataInput & {
    email: string;
    emailVerified?: boolean | undefined;
    externalId?: string | null | undefined;
    createdAt?: number | undefined;
    totpSecret?: string | undefined;
  };

/** Bytes of an imported TOTP secret: RFC 4226 asks for at least 128 bits; 80 is what some systems issued. */
const TOTP_SECRET_BYTES = { min: 10, max: 64 } as const;

/** The imported TOTP secret, checked (400 naming the field); undefined when none was given. */
export function checkedTotpSecret(input: { totpSecret?: string | undefined }): string | undefined {
  if (input.totpSecret === undefined) return undefined;
  const bytes = base32Decode(input.totpSecret);
  if (!bytes || bytes.length < TOTP_SECRET_BYTES.min || bytes.length > TOTP_SECRET_BYTES.max) {
    throw apiError(
      'invalid_request',
      `totpSecret must be a base32 TOTP secret of ${TOTP_SECRET_BYTES.min} to ${TOTP_SECRET_BYTES.max} bytes (16 to 103 characters A–Z and 2–7), as authenticator apps show it.`,
      { fields: ['totpSecret'] },
    );
  }
  return input.totpSecret;
}

/** The profile columns given (validated); omitted ones are left out and null clears one. */
export async function profileColumns(environment: Environment, input: ProfileInput, acceptImageUrl: ImageUrlCheck) {
  const columns: { first_name?: string | null; last_name?: string | null; username?: string | null; image_url?: string | null } = {};
  if (input.firstName !== undefined) columns.first_name = input.firstName;
  if (input.lastName !== undefined) columns.last_name = input.lastName;
  if (input.username !== undefined) columns.username = input.username === null ? null : validUsername(input.username);
  if (input.imageUrl !== undefined) {
    columns.image_url = input.imageUrl === null ? null : await acceptImageUrl(environment, input.imageUrl);
  }
  return columns;
}

/** The row of a new user, its fields checked (400 naming the field), not stored yet. */
export async function newUserRow(
  environment: Environment,
  input: NewUserInput,
  passwordHash: string | null,
  acceptImageUrl: ImageUrlCheck,
  clock: () => number,
): Promise<UserRow> {
  const email = normalizeEmail(input.email);
  const totpSecret = checkedTotpSecret(input);
  const profile = await profileColumns(environment, input, acceptImageUrl);
  const metadata = metadataColumns(input);
  const now = clock();
  return {
    environment_id: environment.id,
    id: newId('user', environment.id),
    email,
    email_key: emailKey(email),
    email_collision: 0,
    username: profile.username ?? null,
    first_name: profile.first_name ?? null,
    last_name: profile.last_name ?? null,
    image_url: profile.image_url ?? null,
    password_hash: passwordHash,
    email_verified: input.emailVerified ? 1 : 0,
    banned: 0,
    public_metadata: metadata.public_metadata ?? '{}',
    private_metadata: metadata.private_metadata ?? '{}',
    unsafe_metadata: metadata.unsafe_metadata ?? '{}',
    external_id: input.externalId ?? null,
    last_sign_in_at: null,
    two_factor_enabled: totpSecret === undefined ? 0 : 1,
    created_at: input.createdAt ?? now,
    updated_at: now,
  };
}

/** The stored text of each metadata object given (validated); omitted ones are left out. */
export function metadataColumns(input: MetadataInput) {
  const columns: { public_metadata?: string; private_metadata?: string; unsafe_metadata?: string } = {};
  if (input.publicMetadata !== undefined) columns.public_metadata = metadataText(input.publicMetadata, 'publicMetadata');
  if (input.privateMetadata !== undefined) columns.private_metadata = metadataText(input.privateMetadata, 'privateMetadata');
  if (input.unsafeMetadata !== undefined) columns.unsafe_metadata = metadataText(input.unsafeMetadata, 'unsafeMetadata');
  return columns;
}

const USERNAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{1,62}[A-Za-z0-9])$/;
export function validUsername(username: string): string {
  if (!USERNAME.test(username)) {
    throw apiError(
      'invalid_request',
      'Field "username" must be 3 to 64 characters of letters, digits, "_", "." or "-", starting and ending with a letter or digit.',
      { fields: ['username'] },
    );
  }
  return username;
}

export function emailTaken(): ApiError {
  return apiError(
    'conflict',
    'A user with this email address already exists in this environment (addresses match whatever their case). Sign in instead.',
    { fields: ['email'] },
  );
}

/** Maps a unique-index violation on users to a 409 naming the field. */
export function conflictFrom(error: unknown): ApiError | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const text = `${(error as { constraint?: string }).constraint ?? ''} ${(error as Error).message ?? ''}`;
  if (text.includes('external_id')) {
    return apiError('conflict', 'Another user of this environment has that externalId; each user has their own.', {
      fields: ['externalId'],
    });
  }
  if (text.includes('username')) {
    return apiError('conflict', 'That username is taken in this environment; choose another.', { fields: ['username'] });
  }
  return emailTaken();
}

/** The stored hash of a new user: argon2id of a password, or an imported digest as it came; null for neither. */
export async function passwordHashOf(input: CreateUserInput): Promise<string | null> {
  if (input.password !== undefined && input.passwordDigest !== undefined) {
    throw apiError('invalid_request', 'Send either "password" or "passwordDigest" with "passwordHasher", not both.', {
      fields: ['password', 'passwordDigest'],
    });
  }
  if ((input.passwordDigest === undefined) !== (input.passwordHasher === undefined)) {
    throw apiError('invalid_request', '"passwordDigest" and "passwordHasher" go together: send both, or neither.', {
      fields: ['passwordDigest', 'passwordHasher'],
    });
  }
  if (input.passwordDigest !== undefined) {
    const stored = storedDigest(input.passwordHasher!, input.passwordDigest);
    if (input.passwordHasher === 'bcrypt') await assertBcryptAvailable();
    return stored;
  }
  if (input.password === undefined) return null;
  assertAcceptablePassword(input.password);
  return hashPassword(input.password);
}
