import type { Kysely, Migration } from 'kysely';

export const flowTokens: Migration = {
  async up(db: Kysely<any>) {
    // One-time secrets of the email flows. Only a hash of each is stored: links and reset tokens by
    // SHA-256 (256 random bits), codes by HMAC under an instance subkey (a 6-digit code is too small
    // a space for a bare hash to protect if the table leaked).
    await db.schema
      .createTable('flow_tokens')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      // Null when the address had no account: verifying the token creates it.
      .addColumn('user_id', 'text')
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      // For reset tokens: which password the token was issued against; a changed password voids it.
      .addColumn('password_fingerprint', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('flow_tokens_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('flow_tokens_secret').on('flow_tokens').columns(['environment_id', 'secret_hash']).unique().execute();
    await db.schema
      .createIndex('flow_tokens_email')
      .on('flow_tokens')
      .columns(['environment_id', 'email', 'purpose', 'created_at'])
      .execute();
  },
};
