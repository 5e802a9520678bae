import type { User } from '@gatehouse/contract';
import type { UsersTable } from '../db/schema.js';
import { parseMetadata } from './metadata.js';

/** A user as the API and webhook events show it. */
export function userView(row: Readonly<UsersTable>): User {
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.email_verified === 1,
    firstName: row.first_name,
    lastName: row.last_name,
    username: row.username,
    imageUrl: row.image_url,
    passwordEnabled: row.password_hash !== null,
    banned: row.banned === 1,
    publicMetadata: parseMetadata(row.public_metadata),
    privateMetadata: parseMetadata(row.private_metadata),
    unsafeMetadata: parseMetadata(row.unsafe_metadata),
    externalId: row.external_id,
    twoFactorEnabled: row.two_factor_enabled === 1,
    lastSignInAt: row.last_sign_in_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
