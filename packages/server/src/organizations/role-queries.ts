/** SQL of an environment's custom organization roles (and who holds one). */
import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction, Updateable } from 'kysely';
import { announce } from '../db/changes.js';
import { lockForUpdate, type Store } from '../db/index.js';
import type { Database, OrganizationRolesTable } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export type RoleRow = OrganizationRolesTable;

export async function listRoles(db: Db, environmentId: EnvironmentId) {
  return db.selectFrom('organization_roles').selectAll().where('environment_id', '=', environmentId).orderBy('key').execute();
}

export async function findRole(db: Db, environmentId: EnvironmentId, key: string) {
  return db
    .selectFrom('organization_roles')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/**
 * Reads a custom role and, on PostgreSQL, locks it until the transaction ends: assigning a role and
 * deleting it then cannot interleave, so no membership is left holding a deleted role.
 */
export async function lockRole(store: Store, tx: Transaction<Database>, environmentId: EnvironmentId, key: string) {
  return lockForUpdate(
    store,
    tx.selectFrom('organization_roles').selectAll().where('environment_id', '=', environmentId).where('key', '=', key),
  ).executeTakeFirst();
}

export async function insertRole(db: Db, environmentId: EnvironmentId, role: Omit<RoleRow, 'environment_id'>) {
  await db
    .insertInto('organization_roles')
    .values({ ...role, environment_id: environmentId })
    .execute();
  announce(db, { kind: 'organizations', environmentId });
}

export async function updateRole(
  db: Db,
  environmentId: EnvironmentId,
  key: string,
  patch: Updateable<Omit<RoleRow, 'environment_id' | 'key' | 'created_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('organization_roles')
    .set(patch)
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
  announce(db, { kind: 'organizations', environmentId });
  return result.numUpdatedRows > 0n;
}

export async function deleteRole(db: Db, environmentId: EnvironmentId, key: string): Promise<boolean> {
  const result = await db
    .deleteFrom('organization_roles')
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
  announce(db, { kind: 'organizations', environmentId });
  return result.numDeletedRows > 0n;
}

export async function countMembershipsWithRole(db: Db, environmentId: EnvironmentId, role: string): Promise<number> {
  const row = await db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('role', '=', role)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
