import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertHandoff(
  db: Db,
  environmentId: EnvironmentId,
  row: { id: string; userId: string; sessionId: string; tokenHash: string; createdAt: number; expiresAt: number },
) {
  await db
    .insertInto('handoff_tokens')
    .values({
      environment_id: environmentId,
      id: row.id,
      user_id: row.userId,
      session_id: row.sessionId,
      token_hash: row.tokenHash,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute();
}

/**
 * Consumes a live token whose minting session is still live, in one statement, so two racing
 * exchanges cannot both win and a token outlives neither its 60 s nor its session.
 */
export async function consumeHandoff(
  db: Db,
  environmentId: EnvironmentId,
  tokenHash: string,
  live: { now: number; activeSince: number },
) {
  return db
    .updateTable('handoff_tokens')
    .set({ consumed_at: live.now })
    .where('environment_id', '=', environmentId)
    .where('token_hash', '=', tokenHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', live.now)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('sessions')
          .select('sessions.id')
          .where('sessions.environment_id', '=', environmentId)
          .whereRef('sessions.id', '=', 'handoff_tokens.session_id')
          .whereRef('sessions.user_id', '=', 'handoff_tokens.user_id')
          .where('sessions.revoked_at', 'is', null)
          .where('sessions.expires_at', '>', live.now)
          .where('sessions.last_active_at', '>', live.activeSince),
      ),
    )
    .returning(['user_id', 'session_id'])
    .executeTakeFirst();
}

/** Whether the session is live: checked again once an exchange has started its new session. */
export async function sessionIsLive(db: Db, environmentId: EnvironmentId, sessionId: string, live: { now: number; activeSince: number }) {
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', live.now)
    .where('last_active_at', '>', live.activeSince)
    .executeTakeFirst();
  return row !== undefined;
}

/** What the minting session has verified (its amr and factor times), carried into the exchanged session. */
export async function sessionFactors(db: Db, environmentId: EnvironmentId, sessionId: string) {
  return db
    .selectFrom('sessions')
    .select(['amr', 'first_factor_at', 'second_factor_at', 'created_at', 'actor'])
    .where('environment_id', '=', environmentId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
}
