import type { Kysely, Migration } from 'kysely';

/**
 * Organizations, their members, and the custom roles of an environment. Every table leads with
 * environment_id, the shard key; timestamps are integer milliseconds.
 */
export const organizations: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('organizations')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      /** [a-z0-9-], unique per environment. */
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('image_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organizations_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('organizations_slug_unique').on('organizations').columns(['environment_id', 'slug']).unique().execute();

    await db.schema
      .createTable('organization_members')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      /** A system role (owner, admin, member) or the key of a custom role of the environment. */
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_members_pk', ['environment_id', 'organization_id', 'user_id'])
      .addForeignKeyConstraint(
        'organization_members_organization_fk',
        ['environment_id', 'organization_id'],
        'organizations',
        ['environment_id', 'id'],
        (fk) => fk.onDelete('cascade'),
      )
      .addForeignKeyConstraint('organization_members_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    // "My organizations" and the deletion guard look memberships up by user.
    await db.schema.createIndex('organization_members_user').on('organization_members').columns(['environment_id', 'user_id']).execute();

    await db.schema
      .createTable('organization_roles')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      /** JSON array of permission keys. */
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_roles_pk', ['environment_id', 'key'])
      .execute();
  },
};
