import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** One row per user per month: the first activity inserts it, later ones change nothing. */
export async function recordActiveUser(db: Db, environmentId: EnvironmentId, month: string, userId: string, now: number) {
  await db
    .insertInto('monthly_active_users')
    .values({ environment_id: environmentId, month, user_id: userId, first_seen_at: now })
    .onConflict((oc) => oc.columns(['environment_id', 'month', 'user_id']).doNothing())
    .execute();
}

export async function countActiveUsers(db: Db, environmentId: EnvironmentId, month: string): Promise<number> {
  const row = await db
    .selectFrom('monthly_active_users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('month', '=', month)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
