import type { Kysely, Migration } from 'kysely';

/** `last_sign_in_at`: when the user last started a session (any method); null until then. */
export const lastSignIn: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('users').addColumn('last_sign_in_at', 'bigint').execute();
  },
};
