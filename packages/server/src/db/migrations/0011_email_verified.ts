import type { Kysely, Migration } from 'kysely';

/**
 * Whether the user has proven they receive mail at their address (a magic link, an email code, a
 * reset link, an invitation) or an operator said so. Existing users start unverified: nothing on
 * record shows how they came, and a later proof sets it.
 */
export const emailVerified: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('users')
      .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
