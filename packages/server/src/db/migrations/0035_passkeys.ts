import type { Kysely, Migration } from 'kysely';

/**
 * Passkeys (docs/passkeys.md): the users' WebAuthn credentials, a random user handle per user (what
 * authenticators store instead of the user id), and the ceremonies' challenges, kept in the
 * database so an options call on one node and its verify on another agree.
 */
export const passkeys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('passkeys')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      // The authenticator's credential id (base64url), unique per environment.
      .addColumn('credential_id', 'text', (c) => c.notNull())
      // The COSE public key (base64url): public, so stored as it is.
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
      // JSON array of the transports the authenticator reported, for allowCredentials hints.
      .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addPrimaryKeyConstraint('passkeys_pk', ['environment_id', 'id'])
      .addForeignKeyConstraint('passkeys_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('passkeys_credential').on('passkeys').columns(['environment_id', 'credential_id']).unique().execute();
    await db.schema.createIndex('passkeys_user').on('passkeys').columns(['environment_id', 'user_id']).execute();

    // The WebAuthn user handle: random per user, never the user id (an authenticator shows it to
    // whoever holds it, and it outlives the account on the device).
    await db.schema
      .createTable('passkey_user_handles')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('handle', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('passkey_user_handles_pk', ['environment_id', 'user_id'])
      .addForeignKeyConstraint('passkey_user_handles_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('passkey_user_handles_handle')
      .on('passkey_user_handles')
      .columns(['environment_id', 'handle'])
      .unique()
      .execute();

    // One live challenge per attempt (a sign-in attempt, a session's registration or reverification,
    // a second-factor attempt): a new options call replaces it, any verify deletes it (compare-and-set).
    await db.schema
      .createTable('passkey_challenges')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('attempt_id', 'text', (c) => c.notNull())
      // "registration" or "authentication": a challenge of one ceremony never serves the other.
      .addColumn('purpose', 'text', (c) => c.notNull())
      // The user the ceremony is for; null for a discoverable sign-in.
      .addColumn('user_id', 'text')
      .addColumn('challenge', 'text', (c) => c.notNull())
      // Fixed by the options call from the request's Origin, never by a body.
      .addColumn('rp_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('passkey_challenges_pk', ['environment_id', 'attempt_id'])
      .execute();
    await db.schema.createIndex('passkey_challenges_expiry').on('passkey_challenges').columns(['environment_id', 'expires_at']).execute();
  },
};
