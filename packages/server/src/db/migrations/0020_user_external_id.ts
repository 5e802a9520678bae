import { sql, type Kysely, type Migration } from 'kysely';

/**
 * `external_id`: the user's id in the system they came from (or any id of the application's), one
 * per user per environment. Bulk imports are idempotent on it: a row whose externalId exists
 * answers the user already there.
 */
export const userExternalId: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('users').addColumn('external_id', 'text').execute();
    await db.schema
      .createIndex('users_external_id')
      .on('users')
      .columns(['environment_id', 'external_id'])
      .unique()
      .where(sql.ref('external_id'), 'is not', null)
      .execute();
  },
};
