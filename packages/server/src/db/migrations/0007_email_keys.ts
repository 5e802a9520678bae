import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Emails compare case-insensitively: each table that looks rows up by address gains a key column
 * (the lowercased address), filled here for existing rows, and the look-up indexes move to it.
 *
 * Users whose addresses already differ only by case (two accounts, `Ada@` and `ada@`) are not merged
 * or deleted: the oldest of each group keeps email_collision = 0 and the others get 1, which leaves
 * them out of the unique index, so it can be created. They are reported at every start while the
 * collision lasts (identity/queries.ts findEmailCollisions).
 */
export const emailKeys: Migration = {
  async up(db: Kysely<any>) {
    // NOT NULL needs a default for existing rows on SQLite; every insert supplies the key (the types require it).
    await db.schema.alterTable('users').addColumn('email_key', 'text', (c) => c.notNull().defaultTo('')).execute();
    await db.schema.alterTable('users').addColumn('email_collision', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('flow_tokens').addColumn('email_key', 'text', (c) => c.notNull().defaultTo('')).execute();
    await db.schema.alterTable('email_outbox').addColumn('to_key', 'text', (c) => c.notNull().defaultTo('')).execute();

    await fillKeys(db, 'users', 'email', 'email_key');
    await fillKeys(db, 'flow_tokens', 'email', 'email_key');
    await fillKeys(db, 'email_outbox', 'to_address', 'to_key');
    await markCollisions(db);

    await db.schema.dropIndex('users_email_unique').execute();
    await db.schema.createIndex('users_email_key').on('users').columns(['environment_id', 'email_key']).execute();
    await db.schema
      .createIndex('users_email_key_unique')
      .on('users')
      .columns(['environment_id', 'email_key'])
      .unique()
      .where(sql.ref('email_collision'), '=', 0)
      .execute();
    // Holds only the colliding users, so the report at start costs nothing when there are none.
    await db.schema
      .createIndex('users_email_collisions')
      .on('users')
      .columns(['environment_id', 'email_key'])
      .where(sql.ref('email_collision'), '=', 1)
      .execute();

    await db.schema.dropIndex('flow_tokens_email').execute();
    await db.schema
      .createIndex('flow_tokens_email_key')
      .on('flow_tokens')
      .columns(['environment_id', 'email_key', 'purpose', 'created_at'])
      .execute();
    await db.schema.dropIndex('email_outbox_recipient').execute();
    await db.schema.createIndex('email_outbox_recipient_key').on('email_outbox').columns(['environment_id', 'to_key', 'created_at']).execute();
  },
};

/** Frozen copy of identity/email.ts emailKey as of this migration. */
function emailKey(address: string): string {
  return address.normalize('NFC').toLowerCase().normalize('NFC');
}

const PAGE = 1000;

/**
 * SQL lower() fills most keys in one statement (A–Z fold alike everywhere); then every row is read
 * in pages and the few whose key JavaScript computes differently (other letters, which SQLite's
 * lower() leaves and PostgreSQL's folds by locale) are corrected one by one.
 */
async function fillKeys(db: Kysely<any>, table: string, source: string, key: string): Promise<void> {
  await db
    .updateTable(table)
    .set({ [key]: sql`lower(${sql.ref(source)})` })
    .execute();
  let after: { environment_id: string; id: string } | undefined;
  for (;;) {
    let page = db
      .selectFrom(table)
      .select(['environment_id', 'id', `${source} as source`, `${key} as key`])
      .orderBy('environment_id')
      .orderBy('id')
      .limit(PAGE);
    if (after) page = page.where((eb) => eb(eb.refTuple('environment_id', 'id'), '>', eb.tuple(after!.environment_id, after!.id)));
    const rows = (await page.execute()) as { environment_id: string; id: string; source: string; key: string }[];
    for (const row of rows) {
      const wanted = emailKey(row.source);
      if (wanted === row.key) continue;
      await db
        .updateTable(table)
        .set({ [key]: wanted })
        .where('environment_id', '=', row.environment_id)
        .where('id', '=', row.id)
        .execute();
    }
    if (rows.length < PAGE) return;
    after = rows.at(-1)!;
  }
}

/** In each group of one environment's users sharing a key, all but the oldest are marked. */
async function markCollisions(db: Kysely<any>): Promise<void> {
  const groups = (await db
    .selectFrom('users')
    .select(['environment_id', 'email_key'])
    .groupBy(['environment_id', 'email_key'])
    .having((eb) => eb.fn.countAll(), '>', 1)
    .execute()) as { environment_id: string; email_key: string }[];
  for (const group of groups) {
    const members = await db
      .selectFrom('users')
      .select('id')
      .where('environment_id', '=', group.environment_id)
      .where('email_key', '=', group.email_key)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    await db
      .updateTable('users')
      .set({ email_collision: 1 })
      .where('environment_id', '=', group.environment_id)
      .where(
        'id',
        'in',
        members.slice(1).map((m) => m.id as string),
      )
      .execute();
  }
}
