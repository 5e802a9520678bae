import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import { announce } from '../db/changes.js';
import { lockForUpdate, type Store } from '../db/index.js';
import { reusableQuery } from '../db/reusable.js';
import type { Database, UsersTable } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export type UserRow = UsersTable;

export async function insertUser(db: Db, environmentId: string, user: Omit<UserRow, 'environment_id'>) {
  await db
    .insertInto('users')
    .values({ ...user, environment_id: environmentId })
    .execute();
}

const userById = reusableQuery(['environmentId', 'userId'] as const, (db: Kysely<Database>, p) =>
  db.selectFrom('users').selectAll().where('environment_id', '=', p.environmentId).where('id', '=', p.userId),
);

/** Read on every GET /v1/me, so compiled once (inside a transaction, built as usual). */
export async function findUser(db: Db, environmentId: string, userId: string) {
  if (db.isTransaction) {
    return db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where('id', '=', userId).executeTakeFirst();
  }
  return (await userById(db, { environmentId, userId }))[0];
}

/** Reads the user and, on PostgreSQL, locks the row until the transaction ends. */
export async function lockUser(store: Store, tx: Transaction<Database>, environmentId: string, userId: string) {
  return lockForUpdate(
    store,
    tx.selectFrom('users').select('id').where('environment_id', '=', environmentId).where('id', '=', userId),
  ).executeTakeFirst();
}

export async function findUserByEmail(db: Db, environmentId: string, email: string) {
  return db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where('email', '=', email).executeTakeFirst();
}

/** Returns whether the user exists (and so was updated). */
export async function updateUser(
  db: Db,
  environmentId: string,
  userId: string,
  patch: Updateable<Omit<UserRow, 'environment_id' | 'id' | 'created_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set(patch)
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .executeTakeFirst();
  announce(db, { kind: 'user', environmentId, userId });
  return result.numUpdatedRows > 0n;
}

/** Deletes the user; their sessions go with them (foreign key, on delete cascade). */
export async function deleteUser(db: Db, environmentId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('environment_id', '=', environmentId).where('id', '=', userId).executeTakeFirst();
  announce(db, { kind: 'user', environmentId, userId });
  return result.numDeletedRows > 0n;
}

function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Newest first. `beforeId` continues a listing; ids sort by creation time. */
export async function listUsers(
  db: Db,
  environmentId: string,
  options: { limit: number; beforeId?: string | undefined; email?: string | undefined; query?: string | undefined },
) {
  let query = db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).orderBy('id', 'desc').limit(options.limit);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  if (options.email !== undefined) query = query.where('email', '=', options.email);
  if (options.query !== undefined) {
    const pattern = likePattern(options.query);
    const like = (column: 'email' | 'first_name' | 'last_name' | 'username') =>
      sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
    query = query.where((eb) => eb.or([like('email'), like('first_name'), like('last_name'), like('username')]));
  }
  return query.execute();
}
