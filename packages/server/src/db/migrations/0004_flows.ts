import { sql, type Kysely, type Migration } from 'kysely';

export const flows: Migration = {
  async up(db: Kysely<any>) {
    // Durable outbox: a message is written in the same transaction as the token it carries, and a
    // worker delivers it afterwards, so a crash after the API answered loses nothing.
    await db.schema
      .createTable('email_outbox')
      .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('text_body', 'text', (c) => c.notNull())
      .addColumn('html_body', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('sent_at', 'bigint')
      .addPrimaryKeyConstraint('email_outbox_pk', ['environment_id', 'id'])
      .execute();
    await db.schema
      .createIndex('email_outbox_recipient')
      .on('email_outbox')
      .columns(['environment_id', 'to_address', 'created_at'])
      .execute();
    // Workers scan pending messages across environments. Pending rows are few (delivered and
    // captured ones are not), so a partial index keeps the scan small on every shard.
    await db.schema
      .createIndex('email_outbox_pending')
      .on('email_outbox')
      .columns(['environment_id', 'next_attempt_at'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
  },
};
