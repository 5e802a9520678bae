import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, PasskeyChallengesTable, PasskeysTable } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export type PasskeyRow = Selectable<PasskeysTable>;
export type ChallengeRow = Selectable<PasskeyChallengesTable>;

// ---- credentials

export function listPasskeys(db: Db, environmentId: EnvironmentId, userId: string): Promise<PasskeyRow[]> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
}

export function findPasskey(db: Db, environmentId: EnvironmentId, userId: string, id: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The credential an assertion names, in this environment only: another environment's never matches. */
export function findByCredentialId(db: Db, environmentId: EnvironmentId, credentialId: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
}

export async function insertPasskey(db: Db, row: PasskeyRow): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

export async function renamePasskey(db: Db, environmentId: EnvironmentId, userId: string, id: string, name: string): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ name })
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deletePasskey(db: Db, environmentId: EnvironmentId, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteAllPasskeys(db: Db, environmentId: EnvironmentId, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Records a use: the counter moves only forward (compare-and-set on the value read), so two
 * concurrent uses of one cloned counter value cannot both pass.
 */
export async function recordUse(
  db: Db,
  environmentId: EnvironmentId,
  id: string,
  change: { expectedCounter: number; counter: number; backedUp: boolean; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter: change.counter, backed_up: change.backedUp ? 1 : 0, last_used_at: change.now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('counter', '=', change.expectedCounter)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

// ---- user handles

export async function findUserHandle(db: Db, environmentId: EnvironmentId, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('passkey_user_handles')
    .select('handle')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.handle;
}

/** Stores `handle` unless the user has one already (a concurrent first registration); answers the one kept. */
export async function ensureUserHandle(db: Db, environmentId: EnvironmentId, userId: string, handle: string): Promise<string> {
  await db
    .insertInto('passkey_user_handles')
    .values({ environment_id: environmentId, user_id: userId, handle })
    .onConflict((oc) => oc.columns(['environment_id', 'user_id']).doNothing())
    .execute();
  return (await findUserHandle(db, environmentId, userId)) ?? handle;
}

// ---- challenges

/** The attempt's challenge, replacing the previous one (which is void from now on). */
export async function putChallenge(db: Db, row: ChallengeRow): Promise<void> {
  const { environment_id, attempt_id, ...rest } = row;
  await db
    .insertInto('passkey_challenges')
    .values(row)
    .onConflict((oc) => oc.columns(['environment_id', 'attempt_id']).doUpdateSet(rest))
    .execute();
  void environment_id;
  void attempt_id;
}

export function findChallenge(db: Db, environmentId: EnvironmentId, attemptId: string): Promise<ChallengeRow | undefined> {
  return db
    .selectFrom('passkey_challenges')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('attempt_id', '=', attemptId)
    .executeTakeFirst();
}

/** Spends the challenge read: true for exactly one of any number of concurrent verifies. */
export async function consumeChallenge(db: Db, environmentId: EnvironmentId, attemptId: string, challenge: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkey_challenges')
    .where('environment_id', '=', environmentId)
    .where('attempt_id', '=', attemptId)
    .where('challenge', '=', challenge)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Housekeeping: the environment's challenges nobody verified. */
export async function deleteExpiredChallenges(db: Db, environmentId: EnvironmentId, now: number): Promise<void> {
  await db.deleteFrom('passkey_challenges').where('environment_id', '=', environmentId).where('expires_at', '<', now).execute();
}
