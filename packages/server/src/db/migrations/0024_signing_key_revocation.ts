import type { Kysely, Migration } from 'kysely';

/**
 * `revoked_at`: when an operator withdrew a (compromised) signing key. A revoked key leaves the
 * JWKS at once and its tokens are refused by `/v1/me*`; it never signs again.
 */
export const signingKeyRevocation: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('signing_keys').addColumn('revoked_at', 'bigint').execute();
  },
};
