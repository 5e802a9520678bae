import type { Kysely, Migration } from 'kysely';

/**
 * API keys of users and organizations. The secret is kept as its SHA-256 with a short lookup part
 * (characters of the secret itself), so a verification finds the row by the lookup part and compares
 * the hash in constant time. A key belongs to one user or one organization and goes with it: the
 * deletion of either deletes its keys in the same transaction (apikeys/service.ts). No foreign key:
 * creating one would lock `users` and `organizations` against writes while the migration waits for
 * the transactions in flight on them (docs/operations.md, "Upgrades").
 */
export const apiKeys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('api_keys')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      // Exactly one of user_id and organization_id is set: the key's subject.
      .addColumn('user_id', 'text')
      .addColumn('organization_id', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('lookup', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      // JSON array of scope names.
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('last_used_at', 'bigint')
      .addPrimaryKeyConstraint('api_keys_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('api_keys_lookup').on('api_keys').columns(['environment_id', 'lookup']).execute();
    await db.schema.createIndex('api_keys_user').on('api_keys').columns(['environment_id', 'user_id']).execute();
    await db.schema.createIndex('api_keys_organization').on('api_keys').columns(['environment_id', 'organization_id']).execute();
  },
};
