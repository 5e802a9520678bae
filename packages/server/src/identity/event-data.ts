import type { User } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';
import { userView } from './views.js';

type Db = Kysely<Database> | Transaction<Database>;

// What user.* webhook events carry (db/events.ts records them).

/** A user as the SK API shows it. */
export const userData = userView;

/** The user as it stands in this transaction; undefined when there is none. */
export async function readUserData(tx: Db, environmentId: EnvironmentId, userId: string): Promise<User | undefined> {
  const row = await tx
    .selectFrom('users')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row && userData(row);
}
