import { sql, type Kysely, type Migration } from 'kysely';

/**
 * How a team grows beyond people who already have accounts: invitations by email, domains an
 * organization has verified (which enrol colleagues), and the membership requests those domains'
 * suggestions lead to. Every table leads with environment_id, the shard key.
 */
export const invitations: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('organization_invitations')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('email_key', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      // pending, accepted or revoked; "expired" is a pending one past expires_at, computed when read.
      .addColumn('status', 'text', (c) => c.notNull())
      // sha256 of the emailed token: the token itself is never stored.
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('redirect_url', 'text', (c) => c.notNull())
      .addColumn('inviter_user_id', 'text')
      .addColumn('accepted_user_id', 'text')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      // When its email last went out (created or refreshed): the flood bound counts these.
      .addColumn('sent_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_invitations_pk', ['environment_id', 'id'])
      .addForeignKeyConstraint(
        'organization_invitations_organization_fk',
        ['environment_id', 'organization_id'],
        'organizations',
        ['environment_id', 'id'],
        (fk) => fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('organization_invitations_token')
      .on('organization_invitations')
      .columns(['environment_id', 'token_hash'])
      .unique()
      .execute();
    // One pending invitation per (organization, address): a second invite refreshes the first.
    await db.schema
      .createIndex('organization_invitations_pending')
      .on('organization_invitations')
      .columns(['environment_id', 'organization_id', 'email_key'])
      .unique()
      .where(sql.ref('status'), '=', 'pending')
      .execute();
    // "Invitations addressed to me".
    await db.schema
      .createIndex('organization_invitations_email')
      .on('organization_invitations')
      .columns(['environment_id', 'email_key', 'status'])
      .execute();
    await db.schema
      .createIndex('organization_invitations_organization')
      .on('organization_invitations')
      .columns(['environment_id', 'organization_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('organization_invitations_sent')
      .on('organization_invitations')
      .columns(['environment_id', 'organization_id', 'sent_at'])
      .execute();

    await db.schema
      .createTable('organization_domains')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      // Lowercased, without a trailing dot.
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('enrollment_mode', 'text', (c) => c.notNull())
      .addColumn('verified', 'integer', (c) => c.notNull())
      // The address at the domain the code went to, the code's HMAC, its tries and expiry.
      .addColumn('verification_email', 'text')
      .addColumn('verification_hash', 'text')
      .addColumn('verification_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('verification_expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_domains_pk', ['environment_id', 'id'])
      .addForeignKeyConstraint(
        'organization_domains_organization_fk',
        ['environment_id', 'organization_id'],
        'organizations',
        ['environment_id', 'id'],
        (fk) => fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('organization_domains_name')
      .on('organization_domains')
      .columns(['environment_id', 'organization_id', 'name'])
      .unique()
      .execute();
    // Enrolment looks verified domains up by name, across the environment's organizations.
    await db.schema.createIndex('organization_domains_lookup').on('organization_domains').columns(['environment_id', 'name']).execute();

    // Suggestions (from automatic_suggestion domains) and the requests they become.
    await db.schema
      .createTable('organization_membership_requests')
      .addColumn('environment_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('domain_id', 'text')
      // suggested (offered to the user), pending (asked for), accepted, rejected
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_membership_requests_pk', ['environment_id', 'id'])
      .addForeignKeyConstraint(
        'organization_membership_requests_organization_fk',
        ['environment_id', 'organization_id'],
        'organizations',
        ['environment_id', 'id'],
        (fk) => fk.onDelete('cascade'),
      )
      .addForeignKeyConstraint(
        'organization_membership_requests_user_fk',
        ['environment_id', 'user_id'],
        'users',
        ['environment_id', 'id'],
        (fk) => fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('organization_membership_requests_user')
      .on('organization_membership_requests')
      .columns(['environment_id', 'user_id', 'organization_id'])
      .unique()
      .execute();
    await db.schema
      .createIndex('organization_membership_requests_organization')
      .on('organization_membership_requests')
      .columns(['environment_id', 'organization_id', 'status'])
      .execute();
  },
};
