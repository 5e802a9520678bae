import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertHandoff(
  db: Db,
  environmentId: EnvironmentId,
  row: { id: string; userId: string; tokenHash: string; createdAt: number; expiresAt: number },
) {
  await db
    .insertInto('handoff_tokens')
    .values({
      environment_id: environmentId,
      id: row.id,
      user_id: row.userId,
      token_hash: row.tokenHash,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute();
}

/** Consumes a live token in one statement, so two racing exchanges cannot both win. */
export async function consumeHandoff(db: Db, environmentId: EnvironmentId, tokenHash: string, now: number) {
  return db
    .updateTable('handoff_tokens')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('token_hash', '=', tokenHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id'])
    .executeTakeFirst();
}
