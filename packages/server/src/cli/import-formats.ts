import type { CreateUserBody } from '@gatehouse/contract';

/**
 * How each export's columns become POST /v1/users bodies (docs/migrating.md has the table). A row
 * that cannot be imported at all is `{skip}` with the reason; one the server should judge is sent.
 */
export type Format = 'clerk' | 'supabase' | 'csv';
export const FORMATS: readonly Format[] = ['clerk', 'supabase', 'csv'];

export type Mapped = { user: CreateUserBody } | { skip: string };

const REQUIRED: Record<Format, string[]> = {
  clerk: ['id', 'primary_email_address', 'password_digest', 'password_hasher'],
  supabase: ['id', 'email', 'encrypted_password', 'email_confirmed_at', 'created_at'],
  csv: ['email'],
};

/** Checks the header names what the format needs; an error message naming the missing columns. */
export function checkHeader(format: Format, header: string[]): string | undefined {
  const missing = REQUIRED[format].filter((name) => !header.includes(name));
  if (missing.length === 0) return undefined;
  return `This file is not a ${format} export: its header lacks ${missing.join(', ')}.`;
}

function text(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** A JSON object column ('{}' or empty for none); anything else is reported, not guessed. */
function object(value: string | undefined, column: string): Record<string, unknown> | undefined {
  const raw = text(value);
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`column ${column} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`column ${column} is not a JSON object`);
  return Object.keys(parsed).length > 0 ? (parsed as Record<string, unknown>) : undefined;
}

/** Milliseconds since the epoch from a number of ms or a date (PostgreSQL's `2024-01-02 03:04:05.678+00`). */
function time(value: string | undefined, column: string): number | undefined {
  const raw = text(value);
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const ms = Date.parse(raw.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00'));
  if (Number.isNaN(ms)) throw new Error(`column ${column} is not a date`);
  return ms;
}

function truthy(value: string | undefined): boolean {
  return ['true', 't', '1', 'yes', 'y'].includes((value ?? '').trim().toLowerCase());
}

/** Drops undefined fields, so the body carries only what the row has. */
function body(fields: Record<string, unknown>): CreateUserBody {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as CreateUserBody;
}

/** Clerk names its Django-format pbkdf2 hasher apart; the digest is the same format. */
const CLERK_HASHERS: Record<string, string> = { pbkdf2_sha256_django: 'pbkdf2_sha256' };

function clerk(r: Record<string, string>): Mapped {
  const email = text(r.primary_email_address);
  if (!email) return { skip: 'no primary email address (phone-only or username-only users cannot be imported)' };
  const verified = (r.verified_email_addresses ?? '').split(/[|,;\s]+/).map((e) => e.trim().toLowerCase());
  const digest = text(r.password_digest);
  const hasher = text(r.password_hasher);
  return {
    user: body({
      email,
      externalId: text(r.id),
      firstName: text(r.first_name),
      lastName: text(r.last_name),
      username: text(r.username),
      emailVerified: verified.includes(email.toLowerCase()),
      ...(digest && hasher ? { passwordDigest: digest, passwordHasher: CLERK_HASHERS[hasher] ?? hasher } : {}),
      publicMetadata: object(r.public_metadata, 'public_metadata'),
      privateMetadata: object(r.private_metadata, 'private_metadata'),
      unsafeMetadata: object(r.unsafe_metadata, 'unsafe_metadata'),
      createdAt: time(r.created_at, 'created_at'),
      // Clerk's authenticator secret (base32): the user keeps TOTP, with the app they already have.
      totpSecret: text(r.totp_secret),
    }),
  };
}

function supabase(r: Record<string, string>): Mapped {
  if (text(r.deleted_at)) return { skip: 'deleted in Supabase (deleted_at is set)' };
  if (truthy(r.is_anonymous)) return { skip: 'an anonymous Supabase user (no email)' };
  const email = text(r.email);
  if (!email) return { skip: 'no email (phone-only users cannot be imported)' };
  // raw_user_meta_data is what the user wrote (supabase.auth.updateUser): unsafe here too.
  const userMeta = object(r.raw_user_meta_data, 'raw_user_meta_data');
  const appMeta = object(r.raw_app_meta_data, 'raw_app_meta_data');
  const name = (key: string) => (typeof userMeta?.[key] === 'string' ? text(userMeta[key] as string) : undefined);
  const digest = text(r.encrypted_password);
  return {
    user: body({
      email,
      externalId: text(r.id),
      emailVerified: Boolean(text(r.email_confirmed_at)),
      firstName: name('first_name') ?? name('given_name'),
      lastName: name('last_name') ?? name('family_name'),
      ...(digest ? { passwordDigest: digest, passwordHasher: 'bcrypt' } : {}),
      publicMetadata: appMeta,
      unsafeMetadata: userMeta,
      createdAt: time(r.created_at, 'created_at'),
    }),
  };
}

function generic(r: Record<string, string>): Mapped {
  const email = text(r.email);
  if (!email) return { skip: 'no email' };
  const digest = text(r.password_digest);
  return {
    user: body({
      email,
      externalId: text(r.external_id) ?? text(r.id),
      firstName: text(r.first_name),
      lastName: text(r.last_name),
      username: text(r.username),
      imageUrl: text(r.image_url),
      emailVerified: r.email_verified === undefined ? undefined : truthy(r.email_verified),
      ...(digest ? { passwordDigest: digest, passwordHasher: text(r.password_hasher) } : {}),
      publicMetadata: object(r.public_metadata, 'public_metadata'),
      privateMetadata: object(r.private_metadata, 'private_metadata'),
      unsafeMetadata: object(r.unsafe_metadata, 'unsafe_metadata'),
      createdAt: time(r.created_at, 'created_at'),
      totpSecret: text(r.totp_secret),
    }),
  };
}

export function mapRecord(format: Format, record: Record<string, string>): Mapped {
  try {
    return format === 'clerk' ? clerk(record) : format === 'supabase' ? supabase(record) : generic(record);
  } catch (error) {
    return { skip: (error as Error).message };
  }
}
