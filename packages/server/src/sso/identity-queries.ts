/** SQL for the identities a user sees and unlinks (GET/DELETE /v1/me/identities). */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A user's identities with their connection's type and config (for the provider's name), oldest first. */
export function listIdentitiesOfUser(db: Db, environmentId: EnvironmentId, userId: string) {
  return db
    .selectFrom('sso_identities as i')
    .innerJoin('sso_connections as c', (join) => join.onRef('c.environment_id', '=', 'i.environment_id').onRef('c.id', '=', 'i.connection_id'))
    .select(['i.id', 'i.connection_id', 'i.subject', 'i.email', 'i.created_at', 'i.user_id', 'c.type', 'c.config'])
    .where('i.environment_id', '=', environmentId)
    .where('i.user_id', '=', userId)
    .orderBy('i.created_at')
    .orderBy('i.id')
    .execute();
}

export type IdentityListRow = Awaited<ReturnType<typeof listIdentitiesOfUser>>[number];

export async function deleteIdentityOfUser(db: Db, environmentId: EnvironmentId, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sso_identities')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
