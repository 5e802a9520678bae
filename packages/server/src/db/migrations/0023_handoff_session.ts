import type { Kysely, Migration } from 'kysely';

/**
 * A handoff token names the session that minted it: the exchange requires that session still live,
 * and revoking a user's sessions deletes their pending tokens. Tokens minted before (null) are refused.
 */
export const handoffSession: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('handoff_tokens').addColumn('session_id', 'text').execute();
    // What revoking deletes by: one session (sign-out), or a user's (revoke-all).
    await db.schema.createIndex('handoff_tokens_session').on('handoff_tokens').columns(['environment_id', 'session_id']).execute();
    await db.schema.createIndex('handoff_tokens_user').on('handoff_tokens').columns(['environment_id', 'user_id']).execute();
  },
};
