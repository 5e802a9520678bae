import type { Kysely, Migration } from 'kysely';

export const handoff: Migration = {
  async up(db: Kysely<any>) {
    // One-time tokens a hosted page hands to the application it redirects to (#__gh_handoff=).
    // Only the SHA-256 of each 256-bit token is stored; each is single-use and lives 60 s.
    await db.schema
      .createTable('handoff_tokens')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('handoff_tokens_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('handoff_tokens_hash').on('handoff_tokens').columns(['environment_id', 'token_hash']).unique().execute();
  },
};
