import type { Kysely, Migration } from 'kysely';

/** A banned user keeps their data but cannot sign in by any method (POST /v1/users/{id}/ban). */
export const userBans: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('users')
      .addColumn('banned', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
