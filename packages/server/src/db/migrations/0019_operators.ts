import type { Kysely, Migration } from 'kysely';

export const operators: Migration = {
  async up(db: Kysely<any>) {
    // One-time links that create an operator: the first-operator setup link printed at start
    // (email null) and invitations an operator sends (email set). Only the SHA-256 is stored.
    await db.schema
      .createTable('operator_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('email', 'text')
      .addColumn('invited_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('used_at', 'bigint')
      .execute();

    // Who did what to the instance through the platform API, and when.
    await db.schema
      .createTable('operator_audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('actor_kind', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      .addColumn('actor_email', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target', 'text')
      .addColumn('status', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('operator_audit_log_at').on('operator_audit_log').columns(['at', 'id']).execute();
  },
};
