import type { User } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import type { Database } from '../db/schema.js';
import type { ImageUrlCheck } from '../assets/image-url.js';
import type { SessionIdentity } from '../http/credentials.js';
import { ApiError, apiError, notFound, userBanned } from '../lib/errors.js';
import type { SessionService } from '../sessions/service.js';
import type { Environment } from '../tenancy/settings.js';
import { emailKey, emailKeyOf, normalizeEmail } from './email.js';
import { assertAcceptablePassword } from './password-policy.js';
import { hashPassword } from './passwords.js';
import * as q from './queries.js';
import { userView } from './views.js';
import {
  conflictFrom,
  emailTaken,
  metadataColumns,
  newUserRow,
  passwordHashOf,
  profileColumns,
  type AdminUserInput,
  type CreateUserInput,
  type MetadataInput,
  type NewUserInput,
  type ProfileInput,
} from './user-input.js';

export type { AdminUserInput, CreateUserInput, MetadataInput, ProfileInput };
import { mergeMetadata, parseMetadata } from './metadata.js';

export type UserView = User;
export { userView };

/**
 * Called inside the delete transaction, after the user row is locked and before anything is
 * changed; throws (403 forbidden, naming the organizations) when the user is the last owner of an
 * organization. It takes the same organization locks as membership changes, so its verdict still
 * holds when the delete commits. The Organizations feature supplies it.
 */
export type AddressProvenHook = (tx: Transaction<Database>, environment: Environment, userId: string) => Promise<void>;

export type UserDeletionGuard = (tx: Transaction<Database>, environment: Environment, userId: string) => Promise<void>;

/** Stores a new user's imported TOTP secret in the transaction that creates the user (mfa/ supplies it). */
export type ImportedTotpWriter = (tx: Transaction<Database>, environment: Environment, userId: string, totpSecret: string) => Promise<void>;

function methodDisabled(what: string): ApiError {
  return apiError(
    'method_disabled',
    `${what} is disabled for this environment. Enable it in the environment settings, or use another method.`,
  );
}

declare const lockedBrand: unique symbol;

/**
 * A user's row read by `lockUser`, in the transaction that holds its lock: what a change of the
 * user's ways to sign in takes, so that it cannot be called without the lock (the count of their
 * passkeys, their factors, holds until the commit).
 */
export type LockedUser = q.UserRow & { readonly [lockedBrand]: true };

export interface IdentityServiceOptions {
  store: Store;
  sessions: SessionService;
  /** The one imageUrl rule (`AssetService.acceptImageUrl`). */
  acceptImageUrl: ImageUrlCheck;
  now: () => number;
  deletionGuard?: UserDeletionGuard | undefined;
  /** Without one, a `totpSecret` given to POST /v1/users or the import is refused. */
  importedTotp?: ImportedTotpWriter | undefined;
  /** Runs in the transaction that first proves a user's address (other domains' takeover defences). */
  addressProven?: AddressProvenHook | undefined;
}

export class IdentityService {
  private readonly store: Store;
  private readonly sessions: SessionService;
  private readonly acceptImageUrl: ImageUrlCheck;
  private readonly now: () => number;
  private readonly deletionGuard: UserDeletionGuard | undefined;
  private readonly importedTotp: ImportedTotpWriter | undefined;
  private readonly addressProven: AddressProvenHook | undefined;

  constructor(options: IdentityServiceOptions) {
    this.importedTotp = options.importedTotp;
    this.store = options.store;
    this.sessions = options.sessions;
    this.acceptImageUrl = options.acceptImageUrl;
    this.now = options.now;
    this.deletionGuard = options.deletionGuard;
    this.addressProven = options.addressProven;
  }

  private get db() {
    return this.store.db;
  }

  private async insert(environment: Environment, input: CreateUserInput): Promise<q.UserRow> {
    return this.insertHashed(this.db, environment, input, await passwordHashOf(input));
  }

  /** The row of a new user, its fields checked (400 naming the field), not stored yet. */
  newUserRow(environment: Environment, input: NewUserInput, passwordHash: string | null): Promise<q.UserRow> {
    return newUserRow(environment, input, passwordHash, this.acceptImageUrl, this.now);
  }

  /** Inserts the user in `db` (a transaction of the caller's, or not), the password already hashed. */
  private async insertHashed(
    db: Kysely<Database> | Transaction<Database>,
    environment: Environment,
    input: NewUserInput,
    passwordHash: string | null,
  ): Promise<q.UserRow> {
    const row = await this.newUserRow(environment, input, passwordHash);
    try {
      // The unique index settles races; this also sees a collision group's marked users, which it leaves out.
      if (await q.emailKeyTaken(db, environment.id, row.email_key)) throw emailTaken();
      const totpSecret = input.totpSecret;
      if (totpSecret === undefined) await q.insertUser(db, environment.id, row);
      else {
        const store = async (tx: Transaction<Database>) => {
          await q.insertUser(tx, environment.id, row);
          await this.storeImportedTotp(tx, environment, row.id, totpSecret);
        };
        if (db.isTransaction) await store(db as Transaction<Database>);
        else await inTransaction(this.db, store);
      }
    } catch (error) {
      throw conflictFrom(error) ?? error;
    }
    return row;
  }

  /**
   * Bulk import: rows from newUserRow whose email keys and externalIds the caller found free, all
   * stored in one transaction or none (a race lost to another writer: the caller goes one by one).
   */
  async insertNewUsers(environment: Environment, rows: readonly q.UserRow[], totpSecrets?: ReadonlyMap<string, string>): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      for (const row of rows) {
        await q.insertUser(tx, environment.id, row);
        const totpSecret = totpSecrets?.get(row.id);
        if (totpSecret !== undefined) await this.storeImportedTotp(tx, environment, row.id, totpSecret);
      }
    });
  }

  private async storeImportedTotp(tx: Transaction<Database>, environment: Environment, userId: string, totpSecret: string): Promise<void> {
    if (!this.importedTotp) throw apiError('invalid_request', 'This server does not take TOTP secrets.', { fields: ['totpSecret'] });
    await this.importedTotp(tx, environment, userId, totpSecret);
  }

  /** The users holding these externalIds, and which of these email keys are held (bulk import look-ups). */
  async importLookups(environment: Environment, externalIds: string[], emailKeys: string[]) {
    const [users, taken] = await Promise.all([
      q.findUsersByExternalIds(this.db, environment.id, externalIds),
      q.takenEmailKeys(this.db, environment.id, emailKeys),
    ]);
    return { byExternalId: new Map(users.map((u) => [u.external_id!, u])), takenEmailKeys: taken };
  }

  /** Sign-up needs password authentication and sign-up on (403 method_disabled otherwise). */
  assertSignUpOpen(environment: Environment): void {
    if (!environment.settings.authMethods.password) throw methodDisabled('Password authentication');
    if (!environment.settings.signUp) throw methodDisabled('Sign-up');
  }

  async createUser(environment: Environment, input: CreateUserInput): Promise<UserView> {
    return userView(await this.insert(environment, input));
  }

  /** The user whose externalId this is, if any (bulk imports are idempotent on it). */
  findByExternalId(environment: Environment, externalId: string): Promise<q.UserRow | undefined> {
    return q.findUserByExternalId(this.db, environment.id, externalId);
  }

  async getUserRow(environment: Environment, userId: string): Promise<q.UserRow> {
    const row = await q.findUser(this.db, environment.id, userId);
    if (!row) throw notFound(`User ${userId}`);
    return row;
  }

  /** The signed-in user: read with the session during token verification when possible. */
  async currentUser(environment: Environment, session: SessionIdentity): Promise<UserView> {
    const row = this.sessions.userReadWith(session);
    return row ? userView(row) : this.getUser(environment, session.userId);
  }

  async getUser(environment: Environment, userId: string): Promise<UserView> {
    return userView(await this.getUserRow(environment, userId));
  }

  /** Changes the given fields; omitted fields are unchanged and null clears one. */
  async updateUser(environment: Environment, userId: string, input: AdminUserInput): Promise<UserView> {
    const columns: Parameters<typeof q.updateUser>[3] = {
      ...(await profileColumns(environment, input, this.acceptImageUrl)),
      ...metadataColumns(input),
      updated_at: this.now(),
    };
    if (input.email !== undefined) {
      columns.email = normalizeEmail(input.email);
      columns.email_key = emailKey(columns.email);
      // A new address is held like any other, so a user of a collision group leaves it by changing theirs.
      columns.email_collision = 0;
      // Nobody has proven the new address yet, unless the operator says so in the same request.
      columns.email_verified = 0;
    }
    if (input.emailVerified !== undefined) columns.email_verified = input.emailVerified ? 1 : 0;
    if (input.externalId !== undefined) columns.external_id = input.externalId;
    if (input.password !== undefined) {
      assertAcceptablePassword(input.password);
      columns.password_hash = await hashPassword(input.password);
    }
    try {
      if (columns.email_key !== undefined && (await q.emailKeyTaken(this.db, environment.id, columns.email_key, userId))) {
        throw emailTaken();
      }
      if (!(await q.updateUser(this.db, environment.id, userId, columns))) throw notFound(`User ${userId}`);
    } catch (error) {
      throw conflictFrom(error) ?? error;
    }
    return this.getUser(environment, userId);
  }

  /**
   * Revokes the user's sessions and deletes the user, unless the deletion guard refuses. `guard`,
   * when given, runs after the service's own, in the deletion's transaction, and refuses by throwing.
   */
  async deleteUser(environment: Environment, userId: string, guard?: UserDeletionGuard): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      // Locked first: a membership insert needs this row (foreign key), so none can appear under the guard.
      if (!(await q.lockUser(this.store, tx, environment.id, userId))) throw notFound(`User ${userId}`);
      if (this.deletionGuard) await this.deletionGuard(tx, environment, userId);
      if (guard) await guard(tx, environment, userId);
      await this.sessions.revokeAllForUser(environment, userId, undefined, tx);
      if (!(await q.deleteUser(tx, environment.id, userId))) throw notFound(`User ${userId}`);
    });
  }

  /**
   * PATCH /v1/users/{id}/metadata: each object given is deep-merged into the stored one (a null
   * removes its key), read and written in one transaction so concurrent merges do not lose keys.
   */
  async mergeMetadata(environment: Environment, userId: string, patch: MetadataInput): Promise<UserView> {
    await inTransaction(this.db, async (tx) => {
      if (!(await q.lockUser(this.store, tx, environment.id, userId))) throw notFound(`User ${userId}`);
      const row = (await q.findUser(tx, environment.id, userId))!;
      const merged: MetadataInput = {};
      if (patch.publicMetadata) merged.publicMetadata = mergeMetadata(parseMetadata(row.public_metadata), patch.publicMetadata);
      if (patch.privateMetadata) merged.privateMetadata = mergeMetadata(parseMetadata(row.private_metadata), patch.privateMetadata);
      if (patch.unsafeMetadata) merged.unsafeMetadata = mergeMetadata(parseMetadata(row.unsafe_metadata), patch.unsafeMetadata);
      await q.updateUser(tx, environment.id, userId, { ...metadataColumns(merged), updated_at: this.now() });
    });
    return this.getUser(environment, userId);
  }

  /**
   * Bans the user: every sign-in is refused from now on, and every session is revoked at once (on
   * every node, like a sign-out). The flag commits before the revocation, so a sign-in racing the
   * ban either sees the flag or has its session revoked (the session's start checks it again).
   */
  async ban(environment: Environment, userId: string): Promise<UserView> {
    if (!(await q.updateUser(this.db, environment.id, userId, { banned: 1, updated_at: this.now() }))) throw notFound(`User ${userId}`);
    await this.sessions.revokeAllForUser(environment, userId);
    return this.getUser(environment, userId);
  }

  async unban(environment: Environment, userId: string): Promise<UserView> {
    if (!(await q.updateUser(this.db, environment.id, userId, { banned: 0, updated_at: this.now() }))) throw notFound(`User ${userId}`);
    return this.getUser(environment, userId);
  }

  async revokeSessions(environment: Environment, userId: string): Promise<number> {
    await this.getUserRow(environment, userId);
    return this.sessions.revokeAllForUser(environment, userId);
  }

  async listUsers(
    environment: Environment,
    options: {
      limit: number;
      beforeId: string | undefined;
      email: string | undefined;
      query: string | undefined;
      externalId?: string | undefined;
    },
  ): Promise<{ users: UserView[]; hasMore: boolean }> {
    const query = options.query?.trim() || undefined;
    const rows = await q.listUsers(this.db, environment.id, {
      limit: options.limit + 1,
      beforeId: options.beforeId,
      emailKey: options.email === undefined ? undefined : emailKeyOf(options.email),
      query,
      externalId: options.externalId,
    });
    return { users: rows.slice(0, options.limit).map(userView), hasMore: rows.length > options.limit };
  }

  // ---- for other domains, which read users through identity, never through its queries

  /** A user row, read in the caller's transaction (`db` may be one). */
  findUser(db: Kysely<Database> | Transaction<Database>, environment: Environment, userId: string): Promise<q.UserRow | undefined> {
    return q.findUser(db, environment.id, userId);
  }

  /** Locks the user's row (PostgreSQL; SQLite serializes writers) and reads it: decisions on the user's ways to sign in. */
  async lockUser(tx: Transaction<Database>, environment: Environment, userId: string): Promise<LockedUser | undefined> {
    if (!(await q.lockUser(this.store, tx, environment.id, userId))) return undefined;
    return (await q.findUser(tx, environment.id, userId)) as LockedUser | undefined;
  }

  /** The user with this (normalized) address, read in the caller's transaction (`db` may be one). */
  findUserByEmail(db: Kysely<Database> | Transaction<Database>, environment: Environment, email: string): Promise<q.UserRow | undefined> {
    return q.findUserByEmail(db, environment.id, email);
  }

  /**
   * Creates a user whose address an emailed secret has just proven (an invitation), inside the
   * caller's transaction, so that the account exists only if the rest of the change commits.
   */
  createVerifiedUserIn(
    db: Kysely<Database> | Transaction<Database>,
    environment: Environment,
    input: { email: string; firstName?: string | undefined; lastName?: string | undefined; username?: string | undefined },
    passwordHash: string | null,
  ): Promise<q.UserRow> {
    return this.insertHashed(db, environment, { ...input, emailVerified: true }, passwordHash);
  }

  /**
   * The account of an address an emailed secret has just proven (a magic link, an email code, a
   * reset link): created now, verified, if it is new; else the one a racing flow or the admin API
   * created first, whose address this proves.
   */
  async createOrFindVerified(
    environment: Environment,
    email: string,
    password?: string,
  ): Promise<{ id: string; email: string; created: boolean }> {
    try {
      const user = await this.createUser(environment, { email, emailVerified: true, ...(password === undefined ? {} : { password }) });
      return { id: user.id, email: user.email, created: true };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'conflict') throw error;
      const existing = await q.findUserByEmail(this.db, environment.id, email);
      if (!existing) throw error;
      await this.markEmailVerified(this.db, environment, existing.id);
      return { id: existing.id, email: existing.email, created: false };
    }
  }

  /** Checks the profile fields of a sign-up before anything is stored (400 naming the field). */
  async assertProfile(environment: Environment, input: ProfileInput): Promise<void> {
    await profileColumns(environment, input, this.acceptImageUrl);
  }

  /** Records that the user proved they receive mail at their address (an emailed link, code or invitation). */
  async markEmailVerified(db: Kysely<Database> | Transaction<Database>, environment: Environment, userId: string): Promise<void> {
    // Pre-registration takeover: someone signs up with another person's address and a password of
    // their own, and waits. When the owner first proves the address (an emailed link or code, an
    // invitation), that password and every session go, so the account is the owner's.
    // A banned user is refused (403 user_banned) before anything changes: a refused sign-in must
    // not verify the address or remove the password, which would outlive an unban.
    const claim = async (tx: Transaction<Database>) => {
      const marked = await q.markEmailVerified(tx, environment.id, userId, this.now());
      if (marked === 'banned') throw userBanned();
      if (!marked.proven) return;
      // Every session goes, not only those a password made: a squatter may have come in through a
      // provider that vouches for nothing, and the hooks below remove that way in too.
      await this.sessions.revokeAllForUser(environment, userId, undefined, tx);
      if (this.addressProven) await this.addressProven(tx, environment, userId);
    };
    if (db.isTransaction) await claim(db as Transaction<Database>);
    else await inTransaction(this.db, claim);
  }
}
