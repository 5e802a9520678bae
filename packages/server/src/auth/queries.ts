import type { EnvironmentId } from '../lib/ids.js';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, FlowPurpose, FlowTokensTable, SignUpAttemptsTable } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertFlowToken(db: Db, environmentId: EnvironmentId, token: Omit<Insertable<FlowTokensTable>, 'environment_id'>) {
  await db
    .insertInto('flow_tokens')
    .values({ ...token, environment_id: environmentId })
    .execute();
}

/** Consumes a live link or reset token in one statement, so two racing uses cannot both win. */
export async function consumeBySecret(db: Db, environmentId: EnvironmentId, purpose: FlowPurpose, secretHash: string, now: number) {
  return db
    .updateTable('flow_tokens')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('secret_hash', '=', secretHash)
    .where('purpose', '=', purpose)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** The newest live code for an address (by its key: any case); older ones were voided when it was issued. */
export async function findLiveCode(db: Db, environmentId: EnvironmentId, emailKey: string, now: number) {
  return db
    .selectFrom('flow_tokens')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('email_key', '=', emailKey)
    .where('purpose', '=', 'email_code')
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function voidLiveCodes(db: Db, environmentId: EnvironmentId, emailKey: string, now: number) {
  await db
    .updateTable('flow_tokens')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('email_key', '=', emailKey)
    .where('purpose', '=', 'email_code')
    .where('consumed_at', 'is', null)
    .execute();
}

/** Counts a wrong try atomically, voiding the code on the last allowed one; returns the new count. */
export async function recordWrongCode(db: Db, environmentId: EnvironmentId, id: string, maxAttempts: number, now: number) {
  const row = await db
    .updateTable('flow_tokens')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      consumed_at: eb
        .case()
        .when('attempts', '>=', maxAttempts - 1)
        .then(now)
        .else(eb.ref('consumed_at'))
        .end(),
    }))
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .returning('attempts')
    .executeTakeFirst();
  return row?.attempts;
}

/** Consumes a code unless it was voided meanwhile; returns whether this call won. */
export async function consumeCode(db: Db, environmentId: EnvironmentId, id: string, maxAttempts: number, now: number) {
  const result = await db
    .updateTable('flow_tokens')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('attempts', '<', maxAttempts)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

// ---- sign-up attempts (emailVerification "required")

export async function insertSignUpAttempt(
  db: Db,
  environmentId: EnvironmentId,
  row: Omit<Insertable<SignUpAttemptsTable>, 'environment_id'>,
) {
  await db
    .insertInto('sign_up_attempts')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

/** The attempt, while its code may still be tried: not used, not expired, tries left. */
export async function findLiveSignUpAttempt(db: Db, environmentId: EnvironmentId, id: string, now: number, maxAttempts: number) {
  return db
    .selectFrom('sign_up_attempts')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .where('attempts', '<', maxAttempts)
    .executeTakeFirst();
}

export async function recordWrongSignUpCode(db: Db, environmentId: EnvironmentId, id: string) {
  await db
    .updateTable('sign_up_attempts')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .execute();
}

/** Uses the attempt, once (compare-and-set); whether this call did. */
export async function consumeSignUpAttempt(db: Db, environmentId: EnvironmentId, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('sign_up_attempts')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
