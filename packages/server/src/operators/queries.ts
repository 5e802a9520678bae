import type { Kysely, Transaction } from 'kysely';
import type { EnvironmentId } from '../lib/ids.js';
import { lockForUpdate, type Store } from '../db/index.js';
import type { Database, OperatorAuditLogTable, OperatorTokensTable } from '../db/schema.js';
import { OPERATORS_PROJECT_KEY } from '../tenancy/queries.js';

// Instance tables: operators administer the whole instance, so nothing here is tenant-scoped but the
// operators' own environment's users.
type Db = Kysely<Database> | Transaction<Database>;

export async function readOperatorsProjectId(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom('instance_meta').select('value').where('key', '=', OPERATORS_PROJECT_KEY).executeTakeFirst();
  return row?.value;
}

/** Serializes operator setups and removals: the operators project's marker row, locked for the transaction. */
export async function lockOperatorSetup(store: Store, tx: Transaction<Database>): Promise<void> {
  await lockForUpdate(store, tx.selectFrom('instance_meta').select('key').where('key', '=', OPERATORS_PROJECT_KEY)).execute();
}

/** Whether the operators' environment has a user (an operator) other than `userId`. */
export async function anotherOperator(db: Db, environmentId: EnvironmentId, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('id', '!=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Claims the marker for `projectId`; false when another node claimed it first. */
export async function claimOperatorsProject(db: Db, projectId: string): Promise<boolean> {
  const result = await db
    .insertInto('instance_meta')
    .values({ key: OPERATORS_PROJECT_KEY, value: projectId })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function insertToken(db: Db, row: OperatorTokensTable): Promise<void> {
  await db.insertInto('operator_tokens').values(row).execute();
}

export async function findTokenByHash(db: Db, tokenHash: string) {
  return db.selectFrom('operator_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Marks the token used; false when it was used already (another request won). */
export async function consumeToken(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('operator_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Once there is an operator, the printed setup links are dead. */
export async function retireSetupTokens(db: Db, now: number): Promise<void> {
  await db.updateTable('operator_tokens').set({ used_at: now }).where('email', 'is', null).where('used_at', 'is', null).execute();
}

export async function insertAuditEntry(db: Db, row: OperatorAuditLogTable): Promise<void> {
  await db.insertInto('operator_audit_log').values(row).execute();
}

/** Newest first; `before` is the (at, id) of the last entry of the previous page. */
export async function listAuditEntries(db: Db, limit: number, before: { at: number; id: string } | undefined) {
  let query = db.selectFrom('operator_audit_log').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(limit);
  if (before) {
    query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]));
  }
  return query.execute();
}

/** The retention: entries older than `before` go (the (at, id) index serves the range). */
export async function deleteAuditEntriesBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('operator_audit_log').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
