import type { EnvironmentId } from '../lib/ids.js';
import {
  PostgresAdapter,
  sql,
  type CompiledQuery,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type Transaction,
  type Updateable,
} from 'kysely';
import { announce } from '../db/changes.js';
import { lockForUpdate, type Store } from '../db/index.js';
import { crossTenant } from '../db/tenant-scope.js';
import { reusableQuery } from '../db/reusable.js';
import type { Database } from '../db/schema.js';
import { atomically, insertWithEvent, recordEvent } from '../db/events.js';
import { readUserData, userData } from './event-data.js';
import { emailKey } from './email.js';
import { searchNeedle, searchText, TRIGRAM } from './search.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A users row, with its email key columns (its search text is kept by the writers below). */
export type UserRow = Omit<Database['users'], 'search_text'>;

export async function insertUser(db: Db, environmentId: EnvironmentId, user: Omit<UserRow, 'environment_id'>) {
  const row = { ...user, environment_id: environmentId };
  await insertWithEvent(
    db,
    environmentId,
    (db) => db.insertInto('users').values({ ...row, search_text: searchText(row) }),
    'user.created',
    userData(row),
  );
}

const SEARCHED = ['email_key', 'first_name', 'last_name', 'username'] as const;

const userById = reusableQuery(['environmentId', 'userId'] as const, (db: Kysely<Database>, p) =>
  db.selectFrom('users').selectAll().where('environment_id', '=', p.environmentId).where('id', '=', p.userId),
);

/** Read on every GET /v1/me, so compiled once (inside a transaction, built as usual). */
export async function findUser(db: Db, environmentId: EnvironmentId, userId: string) {
  if (db.isTransaction) {
    return db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where('id', '=', userId).executeTakeFirst();
  }
  return (await userById(db, { environmentId, userId }))[0];
}

/** Reads the user and, on PostgreSQL, locks the row until the transaction ends. */
export async function lockUser(store: Store, tx: Transaction<Database>, environmentId: EnvironmentId, userId: string) {
  return lockForUpdate(
    store,
    tx.selectFrom('users').select('id').where('environment_id', '=', environmentId).where('id', '=', userId),
  ).executeTakeFirst();
}

/**
 * The account of an address, in any case. One account per key, except in the groups migration 0007
 * found (addresses that differed only by case before keys existed): there the address exactly as
 * stored finds its own user, and any other spelling finds the oldest unmarked user, else the oldest.
 */
export async function findUserByEmail(db: Db, environmentId: EnvironmentId, normalizedEmail: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('email_key', '=', emailKey(normalizedEmail))
    .orderBy(sql`case when ${sql.ref('email')} = ${normalizedEmail} then 0 else 1 end`)
    .orderBy('email_collision')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Whether another user holds the key. The unique index decides races between new addresses; this
 * also sees the marked users of a collision group, which the index leaves out.
 */
export async function emailKeyTaken(db: Db, environmentId: EnvironmentId, key: string, exceptUserId?: string): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where('environment_id', '=', environmentId).where('email_key', '=', key);
  if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

export interface EmailCollision {
  environmentId: EnvironmentId;
  /** Oldest first: the first is the one other spellings of the address reach. */
  userIds: string[];
}

/**
 * Groups of one environment's users whose addresses differ only by case, across every environment:
 * an operator's report, printed at start. Read through the marked rows (a small partial index), and
 * a group counts only while it still has two users.
 */
export async function findEmailCollisions(db: Db): Promise<EmailCollision[]> {
  const rows = await db
    .selectFrom('users as u')
    .select(['u.environment_id', 'u.email_key', 'u.id'])
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('users as marked')
          .select('marked.id')
          .whereRef('marked.environment_id', '=', 'u.environment_id')
          .whereRef('marked.email_key', '=', 'u.email_key')
          .where('marked.email_collision', '=', 1),
      ),
    )
    .orderBy('u.environment_id')
    .orderBy('u.email_key')
    .orderBy('u.email_collision')
    .orderBy('u.created_at')
    .orderBy('u.id')
    .modifyEnd(crossTenant('the start-up report of case collisions covers every environment'))
    .execute();
  const groups = new Map<string, EmailCollision>();
  for (const row of rows) {
    const id = `${row.environment_id} ${row.email_key}`;
    const group = groups.get(id) ?? { environmentId: row.environment_id, userIds: [] };
    group.userIds.push(row.id);
    groups.set(id, group);
  }
  return [...groups.values()].filter((g) => g.userIds.length > 1);
}

/** Returns whether the user exists (and so was updated). */
export async function updateUser(
  db: Db,
  environmentId: EnvironmentId,
  userId: string,
  patch: Updateable<Omit<UserRow, 'environment_id' | 'id' | 'created_at'>>,
): Promise<boolean> {
  return atomically(db, async (db) => {
    const result = await db
      .updateTable('users')
      .set(patch)
      .where('environment_id', '=', environmentId)
      .where('id', '=', userId)
      .executeTakeFirst();
    announce(db, { kind: 'user', environmentId, userId });
    const updated = result.numUpdatedRows > 0n;
    if (updated && SEARCHED.some((column) => column in patch)) {
      const searched = await db
        .selectFrom('users')
        .select(SEARCHED)
        .where('environment_id', '=', environmentId)
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      await db
        .updateTable('users')
        .set({ search_text: searchText(searched) })
        .where('environment_id', '=', environmentId)
        .where('id', '=', userId)
        .execute();
    }
    if (updated) await recordEvent(db, environmentId, 'user.updated', await readUserData(db, environmentId, userId));
    return updated;
  });
}

/**
 * Sets email_verified, once (a verified user is left alone: no write, no event), and removes a
 * password set before the address was proven: whoever set it never showed they own the address.
 * Returns whether such a password was removed.
 */
export async function markEmailVerified(
  db: Db,
  environmentId: EnvironmentId,
  userId: string,
  now: number,
): Promise<{ passwordRemoved: boolean; proven: boolean } | 'banned'> {
  return atomically(db, async (db) => {
    const before = await db
      .selectFrom('users')
      .select(['email_verified', 'password_hash', 'banned'])
      .where('environment_id', '=', environmentId)
      .where('id', '=', userId)
      .executeTakeFirst();
    // A banned account is frozen: the proof that would sign its owner in changes nothing either.
    if (before?.banned === 1) return 'banned';
    if (!before || before.email_verified === 1) return { passwordRemoved: false, proven: false };
    await db
      .updateTable('users')
      .set({ email_verified: 1, password_hash: null, updated_at: now })
      .where('environment_id', '=', environmentId)
      .where('id', '=', userId)
      .execute();
    announce(db, { kind: 'user', environmentId, userId });
    await recordEvent(db, environmentId, 'user.updated', await readUserData(db, environmentId, userId));
    return { passwordRemoved: before.password_hash !== null, proven: true };
  });
}

/** The user whose externalId this is. */
export async function findUserByExternalId(db: Db, environmentId: EnvironmentId, externalId: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

/** The users holding any of these externalIds (bulk import). */
export async function findUsersByExternalIds(db: Db, environmentId: EnvironmentId, externalIds: string[]) {
  if (externalIds.length === 0) return [];
  return db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where('external_id', 'in', externalIds).execute();
}

/** Which of these email keys a user holds, marked collision rows included (bulk import). */
export async function takenEmailKeys(db: Db, environmentId: EnvironmentId, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .selectFrom('users')
    .select('email_key')
    .where('environment_id', '=', environmentId)
    .where('email_key', 'in', keys)
    .execute();
  return new Set(rows.map((r) => r.email_key));
}

/**
 * Replaces the password hash only if it is still `oldHash` (a rehash at sign-in loses to a change
 * made meanwhile). The same password: no event, updatedAt unchanged, no session touched.
 */
export async function replacePasswordHash(
  db: Db,
  environmentId: EnvironmentId,
  userId: string,
  oldHash: string,
  newHash: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: newHash })
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .where('password_hash', '=', oldHash)
    .executeTakeFirst();
  announce(db, { kind: 'user', environmentId, userId });
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A write that changes the user's row (to itself) only while its password hash is still `hash`:
 * a sign-in's proof, run where its session starts (sessions/start-queries.ts).
 */
export function passwordUnchanged(db: Db, environmentId: EnvironmentId, userId: string, hash: string): CompiledQuery {
  return db
    .updateTable('users')
    .set({ password_hash: hash })
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .where('password_hash', '=', hash)
    .compile();
}

/** Deletes the user; their sessions go with them (foreign key, on delete cascade). */
export async function deleteUser(db: Db, environmentId: EnvironmentId, userId: string): Promise<boolean> {
  return atomically(db, async (db) => {
    const last = await readUserData(db, environmentId, userId);
    const result = await db.deleteFrom('users').where('environment_id', '=', environmentId).where('id', '=', userId).executeTakeFirst();
    announce(db, { kind: 'user', environmentId, userId });
    const deleted = result.numDeletedRows > 0n;
    if (deleted) await recordEvent(db, environmentId, 'user.deleted', last);
    return deleted;
  });
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Newest first. `beforeId` continues a listing; ids sort by creation time. */
export async function listUsers(
  db: Db,
  environmentId: EnvironmentId,
  options: {
    limit: number;
    beforeId?: string | undefined;
    emailKey?: string | undefined;
    query?: string | undefined;
    externalId?: string | undefined;
  },
) {
  let query = db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).orderBy('id', 'desc').limit(options.limit);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  if (options.emailKey !== undefined) query = query.where('email_key', '=', options.emailKey);
  if (options.externalId !== undefined) query = query.where('external_id', '=', options.externalId);
  if (options.query === undefined) return query.execute();

  // A substring of the folded text (identity/search.ts), the same test on both databases. The
  // trigram index narrows when the needle has at least three characters; a shorter one is tested
  // row by row in id order, which stops at the page's size.
  const needle = searchNeedle(options.query);
  if (needle === undefined) return [];
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // LIKE, not strpos(): pg_trgm's GIN index serves LIKE. Case-sensitive, on folded text.
    return query.where(sql<boolean>`search_text like ${likePattern(needle)} escape '\\'`).execute();
  }
  const scan = query.where(sql<boolean>`instr(search_text, ${needle}) > 0`);
  if ([...needle].length < TRIGRAM || options.emailKey !== undefined || options.externalId !== undefined) return scan.execute();
  return searchSqlite(db, environmentId, needle, scan, options);
}

/**
 * Per row asked for, on SQLite: a needle with at most this many candidates in the index is fetched by
 * key at once; a commoner one is looked for among this many of the newest users.
 */
const NEWEST_PER_ROW = 16;
/** Up to this many trigram candidates, SQLite fetches them by key; above, it scans in id order. */
const FEW_CANDIDATES = 2000;
/**
 * Needles that had more candidates than a page's window when last searched in an environment (oldest
 * first): their next search there, typically the next page, starts with the newest users and skips
 * the index's count. Only the order of the attempts depends on it, never an answer.
 */
const commonNeedles = new Set<string>();
const COMMON_NEEDLES_KEPT = 1000;

/**
 * SQLite keeps no statistics for FTS5, so the choice PostgreSQL's planner makes is made here, by
 * cost. FTS5 walks a common trigram phrase at about 0.25 µs a match (after some 90 µs to start),
 * so the index is first asked only whether the needle has at most `limit × NEWEST_PER_ROW`
 * candidates in all: a rare needle (a person being looked up) is then fetched by key, at once. A
 * common one fills its page among the newest users, read in order, and is remembered as common, so
 * that its next page starts there. In between, the index is counted up to FEW_CANDIDATES; that few
 * are fetched by key, more are left to the scan in id order, which finds a page within about
 * `limit × users ÷ FEW_CANDIDATES` rows.
 */
async function searchSqlite(
  db: Db,
  environmentId: EnvironmentId,
  needle: string,
  scan: SelectQueryBuilder<Database, 'users', Selectable<Database['users']>>,
  options: { limit: number; beforeId?: string | undefined },
) {
  // A phrase of the trigram tokenizer matches its text as a substring, case-insensitively: a
  // superset that instr() narrows to the exact test. Limits are literals: SQLite plans a statement
  // again on every run when its LIMIT is a parameter.
  const phrase = `"${needle.replaceAll('"', '""')}"`;
  const candidatesUpTo = async (most: number) => {
    const counted = await sql<{ n: number }>`select count(*) as n from (
      select 1 from users_search where users_search match ${phrase} limit ${sql.lit(most + 1)})`.execute(db);
    return counted.rows[0]!.n;
  };
  const fetchCandidates = async () => {
    const before = options.beforeId === undefined ? sql`` : sql`and users.id < ${options.beforeId}`;
    const found = await sql<Selectable<Database['users']>>`select users.* from users_search
      cross join users on users.search_key = users_search.rowid
      where users_search match ${phrase} and users.environment_id = ${environmentId}
        and instr(users.search_text, ${needle}) > 0 ${before}
      order by users.id desc limit ${sql.lit(options.limit)}`.execute(db);
    return found.rows;
  };

  const window = options.limit * NEWEST_PER_ROW;
  const remembered = `${environmentId}\n${needle}`;
  if (!commonNeedles.delete(remembered)) {
    const few = await candidatesUpTo(window);
    if (few === 0) return [];
    if (few <= window) return fetchCandidates();
  }
  commonNeedles.add(remembered); // the newest place in the set
  if (commonNeedles.size > COMMON_NEEDLES_KEPT) commonNeedles.delete(commonNeedles.values().next().value!);

  // The newest `window` users below the cursor (all of them when there are fewer).
  let oldestNear = db.selectFrom('users').select('id').where('environment_id', '=', environmentId);
  if (options.beforeId !== undefined) oldestNear = oldestNear.where('id', '<', options.beforeId);
  oldestNear = oldestNear
    .orderBy('id', 'desc')
    .limit(1)
    .offset(sql.lit(window - 1));
  const near = await scan.where('id', '>=', sql<string>`coalesce((${oldestNear}), '')`).execute();
  if (near.length === options.limit) return near;
  const candidates = await candidatesUpTo(FEW_CANDIDATES);
  if (candidates <= window) commonNeedles.delete(remembered); // no longer common: ask the index first again
  if (candidates === 0) return [];
  return candidates > FEW_CANDIDATES ? scan.execute() : fetchCandidates();
}
