import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * Search that stays fast at a million users. Each user gains `search_text`: the folded email, first
 * name, last name and username, one per line, computed by JavaScript (identity/search.ts) so both
 * databases compare the same characters. A query is a substring of it. PostgreSQL indexes it with
 * trigrams (pg_trgm and btree_gin, GIN); SQLite with an FTS5 trigram table kept in step by triggers. Both answer
 * exactly the same rows: the trigram index only narrows, the substring test decides.
 */
export const userSearch: Migration = {
  async up(db: Kysely<any>) {
    // NOT NULL needs a default for existing rows on SQLite; every insert supplies it.
    await db.schema
      .alterTable('users')
      .addColumn('search_text', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await fillSearchText(db);

    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      // In `public`, once per database: a schema of its own would take the extension with it when
      // dropped (each test run has one), and pg_trgm is a trusted extension since PostgreSQL 13.
      // The lock keeps concurrent migrations of several schemas from racing to create it.
      // btree_gin lets the index lead with environment_id, like every tenant index (the shard key).
      await sql`select pg_advisory_xact_lock(hashtext('gatehouse:pg_trgm'))`.execute(db);
      await sql`create extension if not exists pg_trgm with schema public`.execute(db);
      await sql`create extension if not exists btree_gin with schema public`.execute(db);
      await sql`create index users_search_trgm on users using gin (environment_id, search_text public.gin_trgm_ops)`.execute(db);
      return;
    }
    // The index refers to users by `search_key`, a number of their own: rowids are not stable in
    // SQLite (VACUUM may renumber a table without an INTEGER PRIMARY KEY), and an index of rowids
    // would then point at the wrong users. New users get the next number, in the insert trigger.
    await sql`alter table users add column search_key integer`.execute(db);
    await sql`update users set search_key = rowid`.execute(db);
    await sql`create unique index users_search_key on users (search_key)`.execute(db);
    await sql`create virtual table users_search using fts5(environment_id unindexed, search_text, content='users', content_rowid='search_key', tokenize='trigram')`.execute(
      db,
    );
    await sql`insert into users_search(users_search) values ('rebuild')`.execute(db);
    await sql`create trigger users_search_insert after insert on users begin
      update users set search_key = (select coalesce(max(search_key), 0) + 1 from users) where rowid = new.rowid;
      insert into users_search(rowid, environment_id, search_text)
        select search_key, environment_id, search_text from users where rowid = new.rowid;
    end`.execute(db);
    await sql`create trigger users_search_delete after delete on users begin
      insert into users_search(users_search, rowid, environment_id, search_text) values ('delete', old.search_key, old.environment_id, old.search_text);
    end`.execute(db);
    await sql`create trigger users_search_update after update of search_text on users begin
      insert into users_search(users_search, rowid, environment_id, search_text) values ('delete', old.search_key, old.environment_id, old.search_text);
      insert into users_search(rowid, environment_id, search_text) values (new.search_key, new.environment_id, new.search_text);
    end`.execute(db);
  },
};

/** Frozen copy of identity/search.ts searchText as of this migration. */
function fold(text: string | null): string {
  return (text ?? '').normalize('NFC').toLowerCase().normalize('NFC').replaceAll('\n', ' ');
}

const PAGE = 1000;

async function fillSearchText(db: Kysely<any>): Promise<void> {
  let after: { environment_id: string; id: string } | undefined;
  for (;;) {
    let page = db
      .selectFrom('users')
      .select(['environment_id', 'id', 'email_key', 'first_name', 'last_name', 'username'])
      .orderBy('environment_id')
      .orderBy('id')
      .limit(PAGE);
    if (after) page = page.where((eb) => eb(eb.refTuple('environment_id', 'id'), '>', eb.tuple(after!.environment_id, after!.id)));
    const rows = (await page.execute()) as {
      environment_id: string;
      id: string;
      email_key: string;
      first_name: string | null;
      last_name: string | null;
      username: string | null;
    }[];
    for (const row of rows) {
      await db
        .updateTable('users')
        .set({ search_text: [fold(row.email_key), fold(row.first_name), fold(row.last_name), fold(row.username)].join('\n') })
        .where('environment_id', '=', row.environment_id)
        .where('id', '=', row.id)
        .execute();
    }
    if (rows.length < PAGE) return;
    after = rows.at(-1)!;
  }
}
