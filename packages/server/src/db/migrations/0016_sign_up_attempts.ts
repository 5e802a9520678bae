import type { Kysely, Migration } from 'kysely';

/**
 * Password sign-ups waiting for their emailed code (emailVerification "required"). No user exists
 * until the code comes back, so an attempt reserves nothing and blocks nobody.
 */
export const signUpAttempts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sign_up_attempts')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('first_name', 'text')
      .addColumn('last_name', 'text')
      .addColumn('username', 'text')
      // HMAC of the code, bound to the attempt's id.
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('sign_up_attempts_pk', ['environment_id', 'id'])
      .execute();
  },
};
