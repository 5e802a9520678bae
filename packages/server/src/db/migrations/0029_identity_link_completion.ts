import type { Kysely, Migration } from 'kysely';

/**
 * A link (POST /v1/me/identities) is completed by the signed-in user who started it: the provider's
 * answer is held on the start, behind a one-time token, until that user's session presents it.
 */
export const identityLinkCompletion: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('sso_attempts').addColumn('link_subject', 'text').execute();
    await db.schema.alterTable('sso_attempts').addColumn('link_email', 'text').execute();
    await db.schema.alterTable('sso_attempts').addColumn('link_email_trusted', 'integer').execute();
  },
};
