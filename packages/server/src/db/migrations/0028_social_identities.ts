import type { Kysely, Migration } from 'kysely';
import { newId } from '../../lib/crypto.js';

/**
 * Social connections and account linking: identities get an id (`idn_`) to be listed and unlinked
 * by, and whether the email they were linked with was trusted; an SSO start may link a provider to a
 * signed-in user instead of signing someone in.
 */
export const socialIdentities: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('sso_identities').addColumn('id', 'text').execute();
    // Identities linked before this release were all linked or created with a trusted email.
    await db.schema.alterTable('sso_identities').addColumn('email_trusted', 'integer', (c) => c.notNull().defaultTo(1)).execute();
    const rows = await db.selectFrom('sso_identities').select(['environment_id', 'connection_id', 'subject']).execute();
    for (const row of rows) {
      await db
        .updateTable('sso_identities')
        .set({ id: newId('idn', row.environment_id) })
        .where('environment_id', '=', row.environment_id)
        .where('connection_id', '=', row.connection_id)
        .where('subject', '=', row.subject)
        .execute();
    }
    await db.schema.createIndex('sso_identities_id').on('sso_identities').columns(['environment_id', 'id']).unique().execute();
    // The signed-in user a link start (POST /v1/me/identities) binds the provider to; null for a sign-in.
    await db.schema.alterTable('sso_attempts').addColumn('link_user_id', 'text').execute();
  },
};
