import type { Kysely, Migration } from 'kysely';

/**
 * Machines: OAuth 2.0 clients of an environment (client credentials). The client secret is kept as
 * its SHA-256; `POST /v1/oauth/token` finds the machine by its id alone (the client_id), so that id
 * is unique across environments.
 */
export const machines: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('machines')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      // JSON array of scope names.
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('secret_rotated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('machines_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('machines_id').on('machines').column('id').unique().execute();
  },
};
