import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction } from 'kysely';
import { announce } from '../db/changes.js';
import type { Database } from '../db/schema.js';
import { newId } from '../lib/crypto.js';
import { atomically, recordEvent } from '../db/events.js';
import { countPasskeys } from '../passkeys/queries.js';
import { readUserData } from '../identity/event-data.js';

type Db = Kysely<Database> | Transaction<Database>;

// ---- TOTP

export async function findTotp(db: Db, environmentId: EnvironmentId, userId: string) {
  return db
    .selectFrom('user_totp')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Stores a pending secret, replacing an earlier pending one; an enabled secret is left as it is. */
export async function putPendingTotp(db: Db, environmentId: EnvironmentId, userId: string, sealed: string, now: number) {
  await db
    .insertInto('user_totp')
    .values({
      environment_id: environmentId,
      user_id: userId,
      secret: null,
      pending_secret: sealed,
      enabled_at: null,
      created_at: now,
      last_step: null,
    })
    .onConflict((oc) => oc.columns(['environment_id', 'user_id']).doUpdateSet({ pending_secret: sealed }))
    .execute();
}

/**
 * Spends a time step: sets `last_step` only if it is still earlier (compare-and-set), so of two
 * requests presenting a code of the same step, on any node, exactly one gets true.
 */
export async function claimStep(db: Db, environmentId: EnvironmentId, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('user_totp')
    .set({ last_step: step })
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Makes the pending secret the user's, if it is still `pending` (a newer setup voids this one). */
export async function enableTotp(db: Db, environmentId: EnvironmentId, userId: string, pending: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('user_totp')
    .set({ secret: pending, pending_secret: null, enabled_at: now })
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('pending_secret', '=', pending)
    .where('secret', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** An imported secret: TOTP enabled at once, replacing whatever the user had. */
export async function putEnabledTotp(db: Db, environmentId: EnvironmentId, userId: string, sealed: string, now: number) {
  await db
    .insertInto('user_totp')
    .values({
      environment_id: environmentId,
      user_id: userId,
      secret: sealed,
      pending_secret: null,
      enabled_at: now,
      created_at: now,
      last_step: null,
    })
    .onConflict((oc) =>
      oc.columns(['environment_id', 'user_id']).doUpdateSet({ secret: sealed, pending_secret: null, enabled_at: now, last_step: null }),
    )
    .execute();
}

/** Removes the user's TOTP, pending or enabled; whether an enabled one was removed. */
export async function deleteTotp(db: Db, environmentId: EnvironmentId, userId: string): Promise<boolean> {
  const removed = await db
    .deleteFrom('user_totp')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .returning('secret')
    .execute();
  return removed.some((r) => r.secret !== null);
}

// ---- backup codes

export async function replaceBackupCodes(db: Db, environmentId: EnvironmentId, userId: string, hashes: readonly string[], now: number) {
  await deleteBackupCodes(db, environmentId, userId);
  await db
    .insertInto('user_backup_codes')
    .values(
      hashes.map((code_hash) => ({
        environment_id: environmentId,
        id: newId('bkc', environmentId),
        user_id: userId,
        code_hash,
        created_at: now,
        used_at: null,
      })),
    )
    .execute();
}

export async function deleteBackupCodes(db: Db, environmentId: EnvironmentId, userId: string) {
  await db.deleteFrom('user_backup_codes').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute();
}

/** Spends the unused code with this hash (compare-and-set on `used_at`): true for exactly one caller. */
export async function consumeBackupCode(db: Db, environmentId: EnvironmentId, userId: string, hash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('user_backup_codes')
    .set({ used_at: now })
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countUnusedBackupCodes(db: Db, environmentId: EnvironmentId, userId: string): Promise<number> {
  const row = await db
    .selectFrom('user_backup_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---- the user's summary, and its event

/**
 * After a change to the user's second factors, in its transaction: sets `two_factor_enabled` from
 * what remains, stamps `updated_at` and records `user.updated`. False when the user is gone.
 */
export async function secondFactorsChanged(db: Db, environmentId: EnvironmentId, userId: string, now: number): Promise<boolean> {
  return atomically(db, async (db) => {
    const totp = await findTotp(db, environmentId, userId);
    const enabled = totp?.secret != null || (await countPasskeys(db, environmentId, userId)) > 0 ? 1 : 0;
    const result = await db
      .updateTable('users')
      .set({ two_factor_enabled: enabled, updated_at: now })
      .where('environment_id', '=', environmentId)
      .where('id', '=', userId)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    announce(db, { kind: 'user', environmentId, userId });
    await recordEvent(db, environmentId, 'user.updated', await readUserData(db, environmentId, userId));
    return true;
  });
}

export { countPasskeys };

// ---- organizations that require a second factor

/**
 * Whether the organization the session acts as requires a second factor, and whether the session
 * verified one. Undefined when the session acts as none (or it is gone).
 */
export async function sessionOrganizationPolicy(db: Db, environmentId: EnvironmentId, sessionId: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('organizations as o', (join) =>
      join.onRef('o.environment_id', '=', 's.environment_id').onRef('o.id', '=', 's.active_organization_id'),
    )
    .select(['o.mfa_required', 's.second_factor_at'])
    .where('s.environment_id', '=', environmentId)
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
}
