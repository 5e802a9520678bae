import { sql, type Kysely, type Migration } from 'kysely';

export const webhooks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      // JSON array of event types; null means every event.
      .addColumn('event_types', 'text')
      .addColumn('description', 'text')
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('disabled_reason', 'text')
      // Sealed with a key derived from the instance secret: it must be read back to sign.
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_secret_until', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_endpoints_pk', ['environment_id', 'id'])
      .execute();

    // The transactional outbox: one row per event, written in the transaction of the change.
    await db.schema
      .createTable('webhook_events')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      // The exact body sent: fixed at commit, so every attempt signs the same bytes.
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('fanned_out', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_events_pk', ['environment_id', 'id'])
      .execute();
    await db.schema
      // Like the email outbox's: partial, so the worker's scan across environments reads only the few
      // rows waiting, and led by environment_id like every tenant index (the shard key).
      .createIndex('webhook_events_unfanned')
      .on('webhook_events')
      .columns(['environment_id', 'created_at'])
      .where(sql.ref('fanned_out'), '=', 0)
      .execute();

    // One row per attempt; the pending row of a message is its place in the delivery queue.
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('error', 'text')
      .addColumn('next_attempt_at', 'bigint')
      .addColumn('locked_until', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_deliveries_pk', ['environment_id', 'id'])
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_endpoint')
      .on('webhook_deliveries')
      .columns(['environment_id', 'endpoint_id', 'id'])
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_pending')
      .on('webhook_deliveries')
      .columns(['environment_id', 'next_attempt_at'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
  },
};
