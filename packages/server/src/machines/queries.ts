import type { Kysely, Transaction } from 'kysely';
import type { Database, MachinesTable } from '../db/schema.js';
import { crossTenant } from '../db/tenant-scope.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export type MachineRow = Omit<MachinesTable, 'environment_id'>;

export async function insertMachine(db: Db, environmentId: EnvironmentId, row: MachineRow): Promise<void> {
  await db
    .insertInto('machines')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

export async function listMachines(db: Db, environmentId: EnvironmentId) {
  return db.selectFrom('machines').selectAll().where('environment_id', '=', environmentId).orderBy('id').limit(500).execute();
}

export async function countMachines(db: Db, environmentId: EnvironmentId): Promise<number> {
  const row = await db
    .selectFrom('machines')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The machine a client_id names, in whichever environment it is: the token endpoint has no other credential. */
export async function findMachineById(db: Db, machineId: string) {
  return db
    .selectFrom('machines')
    .select(['environment_id', 'id', 'scopes', 'secret_hash'])
    .where('id', '=', machineId)
    .modifyEnd(crossTenant('a client_id names its machine, which is how its environment is found'))
    .executeTakeFirst();
}

export async function deleteMachine(db: Db, environmentId: EnvironmentId, machineId: string): Promise<boolean> {
  const result = await db.deleteFrom('machines').where('environment_id', '=', environmentId).where('id', '=', machineId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function replaceSecret(db: Db, environmentId: EnvironmentId, machineId: string, hash: string, now: number) {
  return db
    .updateTable('machines')
    .set({ secret_hash: hash, secret_rotated_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', machineId)
    .returningAll()
    .executeTakeFirst();
}
