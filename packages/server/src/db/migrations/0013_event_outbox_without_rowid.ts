import { sql, SqliteAdapter, type Kysely, type Migration } from 'kysely';

/**
 * SQLite only: the event outbox becomes a WITHOUT ROWID table, so its primary key is the table
 * itself and an event insert writes one b-tree fewer. Every change that emits an event pays that
 * write inside its own transaction (bench/webhooks.bench.ts, docs/performance.md). PostgreSQL keeps
 * its heap table, where the primary key is an index either way.
 */
export const eventOutboxWithoutRowid: Migration = {
  async up(db: Kysely<any>) {
    if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
    await sql`create table webhook_events_next (
      environment_id text not null references environments (id),
      id text not null,
      type text not null,
      body text not null,
      fanned_out integer not null default 0,
      created_at bigint not null,
      constraint webhook_events_pk primary key (environment_id, id)
    ) without rowid`.execute(db);
    await sql`insert into webhook_events_next (environment_id, id, type, body, fanned_out, created_at)
      select environment_id, id, type, body, fanned_out, created_at from webhook_events`.execute(db);
    await sql`drop table webhook_events`.execute(db);
    await sql`alter table webhook_events_next rename to webhook_events`.execute(db);
    await db.schema
      .createIndex('webhook_events_unfanned')
      .on('webhook_events')
      .columns(['environment_id', 'created_at'])
      .where(sql.ref('fanned_out'), '=', 0)
      .execute();
  },
};
