import type { Kysely, Migration } from 'kysely';

/**
 * Second-factor attempts (docs/mfa.md, "Signing in with a second factor"): a first factor proven,
 * a session not yet started. In the database, so the second step may reach any node.
 */
export const secondFactorAttempts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sign_in_attempts')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      // 'second_factor' (the user has one) or 'setup' (mfa "required", the user has none).
      .addColumn('kind', 'text', (c) => c.notNull())
      // The first factors verified, as a JSON array of amr names.
      .addColumn('first_factors', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('wrong_tries', 'integer', (c) => c.notNull().defaultTo(0))
      // Set once, by the compare-and-set that completes the attempt.
      .addColumn('spent_at', 'bigint')
      .addPrimaryKeyConstraint('sign_in_attempts_pk', ['environment_id', 'id'])
      .addForeignKeyConstraint('sign_in_attempts_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('sign_in_attempts_user').on('sign_in_attempts').columns(['environment_id', 'user_id']).execute();
    // Expired attempts are swept as new ones are issued.
    await db.schema.createIndex('sign_in_attempts_expiry').on('sign_in_attempts').columns(['environment_id', 'expires_at']).execute();
  },
};
