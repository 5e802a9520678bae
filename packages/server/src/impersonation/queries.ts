import type { Kysely, Transaction } from 'kysely';
import type { ActorTokensTable, Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertActorToken(db: Db, row: ActorTokensTable): Promise<void> {
  await db.insertInto('actor_tokens').values(row).execute();
}

/** Forgets the environment's expired tokens (refused from then on; the audit log keeps the record). */
export async function sweepActorTokens(db: Db, environmentId: EnvironmentId, now: number): Promise<void> {
  await db.deleteFrom('actor_tokens').where('environment_id', '=', environmentId).where('expires_at', '<=', now).execute();
}

/**
 * Spends a live token in one statement (compare-and-set on `consumed_at`): of two redemptions racing,
 * exactly one gets the row; an expired token, a spent one or one of another environment gets none.
 */
export async function consumeActorToken(db: Db, environmentId: EnvironmentId, tokenHash: string, now: number) {
  return db
    .updateTable('actor_tokens')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('token_hash', '=', tokenHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id', 'user_id', 'actor_sub'])
    .executeTakeFirst();
}
