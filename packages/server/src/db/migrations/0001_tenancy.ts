import type { Kysely, Migration } from 'kysely';

export const tenancy: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('instance_meta')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('environments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('publishable_key', 'text', (c) => c.notNull())
      .addColumn('publishable_key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('environments_project_type_unique', ['project_id', 'type'])
      .execute();

    await db.schema
      .createTable('secret_keys')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('hint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addPrimaryKeyConstraint('secret_keys_pk', ['environment_id', 'id'])
      .execute();
  },
};
