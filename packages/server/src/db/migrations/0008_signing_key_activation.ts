import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

export const signingKeyActivation: Migration = {
  async up(db: Kysely<any>) {
    // Staged rotation: a new key is published at once but signs only from `activates_at`, once
    // verifiers have had time to fetch it. `retired_at` (when a key stops signing) may now lie in
    // the future: it is the successor's activation time. Keys made before this signed at creation.
    await db.schema.alterTable('signing_keys').addColumn('activates_at', 'bigint').execute();
    await sql`update signing_keys set activates_at = created_at`.execute(db);
  },
};
