import type { Kysely, Migration } from 'kysely';

/**
 * Application data on a user, as JSON objects: public (the user reads it, the backend writes it),
 * private (the backend only) and unsafe (the user writes it). At most 8 KiB each.
 */
export const userMetadata: Migration = {
  async up(db: Kysely<any>) {
    for (const column of ['public_metadata', 'private_metadata', 'unsafe_metadata']) {
      await db.schema
        .alterTable('users')
        .addColumn(column, 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
    }
  },
};
