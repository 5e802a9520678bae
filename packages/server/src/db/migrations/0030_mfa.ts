import type { Kysely, Migration } from 'kysely';

/**
 * Multi-factor authentication (docs/mfa.md): a TOTP secret per user, backup codes, what each session
 * verified and when, organizations that require a second factor, and the users' summary flag.
 */
/*
 * On PostgreSQL each added column is metadata only (a constant default rewrites nothing), but
 * takes the table's exclusive lock for that instant, so it waits for transactions open on users,
 * sessions and organizations (docs/operations.md, "Upgrades").
 */
export const mfa: Migration = {
  async up(db: Kysely<any>) {
    // One row per user who has (or is enrolling) TOTP. Secrets are sealed with the instance secret:
    // the server must read them back to compute codes, so they cannot be hashes.
    await db.schema
      .createTable('user_totp')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      // The confirmed secret; null while only a pending one exists.
      .addColumn('secret', 'text')
      // POST /v1/me/mfa/totp's secret, until a code confirms it (a second call replaces it).
      .addColumn('pending_secret', 'text')
      .addColumn('enabled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // The last accepted time step (RFC 6238 §5.2): a code is accepted only for a later one.
      .addColumn('last_step', 'bigint')
      .addPrimaryKeyConstraint('user_totp_pk', ['environment_id', 'user_id'])
      .addForeignKeyConstraint('user_totp_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();

    // Backup codes: only a keyed hash of each; `used_at` spends one (compare-and-set).
    await db.schema
      .createTable('user_backup_codes')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addPrimaryKeyConstraint('user_backup_codes_pk', ['environment_id', 'id'])
      .addForeignKeyConstraint('user_backup_codes_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('user_backup_codes_hash')
      .on('user_backup_codes')
      .columns(['environment_id', 'user_id', 'code_hash'])
      .unique()
      .execute();

    // What each session verified: its factors (JSON array, in order) and when it last verified a
    // first and a second factor (the access token's amr and fva; reverification reads them).
    await db.schema
      .alterTable('sessions')
      .addColumn('amr', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema.alterTable('sessions').addColumn('first_factor_at', 'bigint').execute();
    await db.schema.alterTable('sessions').addColumn('second_factor_at', 'bigint').execute();
    // No backfill (it would rewrite every session inside the migrations' transaction): a session
    // from before this release has first_factor_at null, read as its start (sessions/service.ts).

    await db.schema
      .alterTable('organizations')
      .addColumn('mfa_required', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // 1 while the user has TOTP (or, later, a passkey): kept by the writers of second factors.
    await db.schema
      .alterTable('users')
      .addColumn('two_factor_enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
