import type { Kysely, Migration } from 'kysely';

/**
 * Project branding. Uploaded objects need no table: they are content-addressed in the object
 * store, which is the one record of what is stored.
 */
export const assets: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('projects').addColumn('logo_url', 'text').execute();
  },
};
