import type { Kysely, Migration } from 'kysely';
import { createIndexOnLargeTable } from '../concurrent-indexes.js';

/**
 * `GET /v1/users?email=` lists newest first. With the index on (environment_id, email_key) alone,
 * SQLite (which keeps no statistics) preferred the primary key, which gives that order, and read
 * every user of the environment: 2 requests a second at a million users. With `id` in the index,
 * one index serves both the filter and the order on either database.
 *
 * On a PostgreSQL `users` table with rows, the index is built CONCURRENTLY after the migrations'
 * transaction (db/concurrent-indexes.ts) instead of here, where it held every write to `users`
 * while it was built. A database that applied the earlier form has the index already, and the
 * later step finds it valid.
 */
export const userEmailOrder: Migration = {
  async up(db: Kysely<any>) {
    await createIndexOnLargeTable(db, 'users_email_key_order');
  },
};
