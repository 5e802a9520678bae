import type { EnvironmentId } from '../lib/ids.js';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, SigningKeysTable } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

// An environment's signing keys: the active one, a scheduled successor, and retired keys still published.

/** The keys that sign now or will: the active one, and a pending successor if one is scheduled. */
export async function listLiveSigningKeys(db: Db, environmentId: EnvironmentId, now: number) {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
    .orderBy('activates_at', 'asc')
    .execute();
}

export async function findSigningKey(db: Db, environmentId: EnvironmentId, kid: string) {
  return db
    .selectFrom('signing_keys')
    .select(['id', 'algorithm', 'public_jwk', 'created_at', 'activates_at', 'retired_at', 'publish_until', 'revoked_at'])
    .where('environment_id', '=', environmentId)
    .where('id', '=', kid)
    .executeTakeFirst();
}

/**
 * Withdraws a key: it stops signing (if it still did), leaves the JWKS now, and is marked revoked.
 * Only a key not revoked yet; returns whether this call revoked it.
 */
export async function revokeSigningKey(
  db: Db,
  environmentId: EnvironmentId,
  kid: string,
  change: { now: number; retiredAt: number },
): Promise<boolean> {
  const result = await db
    .updateTable('signing_keys')
    .set({ revoked_at: change.now, publish_until: change.now, retired_at: change.retiredAt })
    .where('environment_id', '=', environmentId)
    .where('id', '=', kid)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Live keys (active and pending) and every retired key still within its publication window, latest activation first. */
export async function listPublishedSigningKeys(db: Db, environmentId: EnvironmentId, now: number) {
  return db
    .selectFrom('signing_keys')
    .select(['id', 'algorithm', 'public_jwk', 'created_at', 'activates_at', 'retired_at', 'publish_until'])
    .where('environment_id', '=', environmentId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('publish_until', '>', now)]))
    .orderBy('activates_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}

/**
 * Sets when a key stops signing and until when it stays published, if its `retired_at` is still
 * `expectedRetiredAt` (compare-and-set: false when another node changed the schedule first).
 */
export async function setSigningKeyRetirement(
  db: Db,
  environmentId: EnvironmentId,
  kid: string,
  expectedRetiredAt: number | null,
  change: { retired_at: number | null; publish_until: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('signing_keys')
    .set(change)
    .where('environment_id', '=', environmentId)
    .where('id', '=', kid)
    .where('retired_at', expectedRetiredAt === null ? 'is' : '=', expectedRetiredAt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertSigningKey(db: Db, environmentId: EnvironmentId, key: Omit<Insertable<SigningKeysTable>, 'environment_id'>) {
  await db
    .insertInto('signing_keys')
    .values({ ...key, environment_id: environmentId })
    .execute();
}

// ---- sessions
