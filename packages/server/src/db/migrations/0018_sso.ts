import type { Kysely, Migration } from 'kysely';

export const sso: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sso_connections')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      // JSON array of lowercased domains; routing reads the few connections of one environment.
      .addColumn('domains', 'text', (c) => c.notNull())
      // JSON of the non-secret settings (issuer, clientId, scopes, preset; SAML IdP fields).
      .addColumn('config', 'text', (c) => c.notNull())
      // OIDC client secret sealed under a key derived from the instance secret: it must be read back.
      .addColumn('client_secret', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sso_connections_pk', ['environment_id', 'id'])
      .execute();
    // The IdP's browser arrives with only the connection id in the path.
    await db.schema.createIndex('sso_connections_id').on('sso_connections').column('id').unique().execute();

    await db.schema
      .createTable('sso_identities')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_sign_in_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sso_identities_pk', ['environment_id', 'connection_id', 'subject'])
      .execute();
    await db.schema.createIndex('sso_identities_user').on('sso_identities').columns(['environment_id', 'user_id']).execute();

    // One row per sign-in attempt: the start's state (hashed), nonce, PKCE verifier or SAML request
    // id and redirect URL; then the one-time handoff token (hashed) the callback issued.
    await db.schema
      .createTable('sso_attempts')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('state_hash', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text')
      .addColumn('code_verifier', 'text')
      .addColumn('saml_request_id', 'text')
      .addColumn('redirect_url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .addColumn('user_id', 'text')
      .addColumn('token_hash', 'text')
      .addColumn('token_expires_at', 'bigint')
      .addColumn('token_consumed_at', 'bigint')
      .addPrimaryKeyConstraint('sso_attempts_pk', ['environment_id', 'id'])
      .execute();
    await db.schema.createIndex('sso_attempts_state').on('sso_attempts').columns(['environment_id', 'state_hash']).unique().execute();
    await db.schema.createIndex('sso_attempts_token').on('sso_attempts').columns(['environment_id', 'token_hash']).execute();

    // IdP-initiated SAML assertions seen, until they lapse (replay refusal).
    await db.schema
      .createTable('sso_seen_assertions')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('assertion_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sso_seen_assertions_pk', ['environment_id', 'connection_id', 'assertion_id'])
      .execute();
  },
};
