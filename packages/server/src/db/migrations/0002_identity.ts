import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Users, sessions, signing keys and monthly active users. Every table leads with environment_id,
 * the shard key; timestamps are integer milliseconds and booleans 0/1.
 */
export const identity: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('users')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('username', 'text')
      .addColumn('first_name', 'text')
      .addColumn('last_name', 'text')
      .addColumn('image_url', 'text')
      .addColumn('password_hash', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('users_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('users_email_unique').on('users').columns(['environment_id', 'email']).unique().execute();
    // Usernames are unique per environment whatever their case; NULLs never collide.
    await sql`create unique index users_username_unique on users (environment_id, lower(username))`.execute(db);

    await db.schema
      .createTable('sessions')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      /** sha256 of the current refresh token. */
      .addColumn('refresh_hash', 'text', (c) => c.notNull())
      /** sha256 of the token it replaced, for the grace window; null before the first rotation. */
      .addColumn('previous_hash', 'text')
      /** How many rotations the session has had; refresh tokens carry it. */
      .addColumn('generation', 'integer', (c) => c.notNull())
      .addColumn('rotated_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_active_at', 'bigint', (c) => c.notNull())
      /** Absolute end of life, fixed at creation. */
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      /** The organization the session acts as (filled by the Organizations feature). */
      .addColumn('active_organization_id', 'text')
      .addColumn('user_agent', 'text')
      .addPrimaryKeyConstraint('sessions_pk', ['environment_id', 'id'])
      // Deleting a user deletes their sessions, and no session can be created for a deleted user.
      .addForeignKeyConstraint('sessions_user_fk', ['environment_id', 'user_id'], 'users', ['environment_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').columns(['environment_id', 'user_id']).execute();

    await db.schema
      .createTable('signing_keys')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      /** The JWT kid. */
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('algorithm', 'text', (c) => c.notNull())
      /** Public JWK, JSON. */
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      /** PKCS#8 private key, AES-256-GCM encrypted with a key derived from GATEHOUSE_SECRET. */
      .addColumn('private_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      /** Null for the current key; set when a newer key replaced it. */
      .addColumn('retired_at', 'bigint')
      /** A retired key stays published until every token it signed has expired. */
      .addColumn('publish_until', 'bigint')
      .addPrimaryKeyConstraint('signing_keys_pk', ['environment_id', 'id'])
      .execute();
    // At most one current key per environment, even when two nodes create one at once.
    await db.schema
      .createIndex('signing_keys_one_current')
      .on('signing_keys')
      .column('environment_id')
      .unique()
      .where(sql.ref('retired_at'), 'is', null)
      .execute();

    await db.schema
      .createTable('monthly_active_users')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      /** UTC calendar month, YYYY-MM. */
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('monthly_active_users_pk', ['environment_id', 'month', 'user_id'])
      .execute();
  },
};
