import type { Kysely, Transaction } from 'kysely';
import { announce } from '../db/changes.js';
import type { ApiKeysTable, Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export type ApiKeyRow = Omit<ApiKeysTable, 'environment_id'>;

/** Whose keys a listing or a revocation may touch: one user, one organization, or (secret key) any. */
export type KeyOwner = { userId: string } | { organizationId: string } | 'any';

export async function insertKey(db: Db, environmentId: EnvironmentId, row: ApiKeyRow): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

export async function countKeysOf(db: Db, environmentId: EnvironmentId, owner: Exclude<KeyOwner, 'any'>): Promise<number> {
  let query = db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId);
  query = 'userId' in owner ? query.where('user_id', '=', owner.userId) : query.where('organization_id', '=', owner.organizationId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** The rows whose secret starts with `lookup` (almost always one or none), with whether the user is banned. */
export async function findByLookup(db: Db, environmentId: EnvironmentId, lookup: string) {
  return db
    .selectFrom('api_keys')
    .leftJoin('users', (join) =>
      join.onRef('users.environment_id', '=', 'api_keys.environment_id').onRef('users.id', '=', 'api_keys.user_id'),
    )
    .select([
      'api_keys.id',
      'api_keys.user_id',
      'api_keys.organization_id',
      'api_keys.secret_hash',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.last_used_at',
      'users.banned',
    ])
    .where('api_keys.environment_id', '=', environmentId)
    .where('api_keys.lookup', '=', lookup)
    .limit(8)
    .execute();
}

/** Newest first; `beforeId` continues a listing (ids sort by creation time). */
export async function listKeys(
  db: Db,
  environmentId: EnvironmentId,
  owner: KeyOwner,
  options: { limit: number; beforeId?: string | undefined },
) {
  let query = db.selectFrom('api_keys').selectAll().where('environment_id', '=', environmentId);
  if (owner !== 'any') {
    query = 'userId' in owner ? query.where('user_id', '=', owner.userId) : query.where('organization_id', '=', owner.organizationId);
  }
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  return query.orderBy('id', 'desc').limit(options.limit).execute();
}

/** Deletes a key of `owner`; announced, so every node's cache drops it once this commits. */
export async function deleteKey(db: Db, environmentId: EnvironmentId, keyId: string, owner: KeyOwner): Promise<boolean> {
  let query = db.deleteFrom('api_keys').where('environment_id', '=', environmentId).where('id', '=', keyId);
  if (owner !== 'any') {
    query = 'userId' in owner ? query.where('user_id', '=', owner.userId) : query.where('organization_id', '=', owner.organizationId);
  }
  const result = await query.executeTakeFirst();
  const deleted = result.numDeletedRows > 0n;
  if (deleted) announce(db, { kind: 'apiKey', environmentId, keyId });
  return deleted;
}

/** Records a use, at most once a minute per key: a later write within the minute changes nothing. */
export async function touchKey(db: Db, environmentId: EnvironmentId, keyId: string, now: number, everyMs: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - everyMs)]))
    .execute();
}

/** Deletes every key of a user or an organization that is being deleted, in its transaction. */
export async function deleteKeysOf(db: Db, environmentId: EnvironmentId, owner: Exclude<KeyOwner, 'any'>): Promise<void> {
  let query = db.deleteFrom('api_keys').where('environment_id', '=', environmentId);
  query = 'userId' in owner ? query.where('user_id', '=', owner.userId) : query.where('organization_id', '=', owner.organizationId);
  const deleted = await query.returning('id').execute();
  for (const { id } of deleted) announce(db, { kind: 'apiKey', environmentId, keyId: id });
}
