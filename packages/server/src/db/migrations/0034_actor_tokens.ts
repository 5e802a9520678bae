import type { Kysely, Migration } from 'kysely';

/**
 * Impersonation (docs/impersonation.md): actor tokens, kept as the SHA-256 of the token and spent
 * once (`consumed_at`, compare-and-set), and the actor of a session (`sessions.actor`, the `act.sub`
 * of its access tokens; null for every other session), so that refreshes and hosted handoffs keep
 * `act` and its one-hour limit.
 */
export const actorTokens: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('actor_tokens')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('actor_sub', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('actor_tokens_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('actor_tokens_hash').on('actor_tokens').columns(['environment_id', 'token_hash']).unique().execute();
    // Expired tokens are swept as new ones are minted.
    await db.schema.createIndex('actor_tokens_expiry').on('actor_tokens').columns(['environment_id', 'expires_at']).execute();
    await db.schema.alterTable('sessions').addColumn('actor', 'text').execute();
  },
};
