import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, SignInAttemptsTable } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export type SignInAttemptRow = Selectable<SignInAttemptsTable>;

/** Wrong codes an attempt survives; the fifth kills it. */
export const MAX_WRONG_TRIES = 5;

export async function insertSignInAttempt(
  db: Db,
  environmentId: EnvironmentId,
  row: {
    id: string;
    userId: string;
    kind: SignInAttemptsTable['kind'];
    firstFactors: readonly string[];
    createdAt: number;
    expiresAt: number;
  },
): Promise<void> {
  await db
    .insertInto('sign_in_attempts')
    .values({
      environment_id: environmentId,
      id: row.id,
      user_id: row.userId,
      kind: row.kind,
      first_factors: JSON.stringify(row.firstFactors),
      created_at: row.createdAt,
      expires_at: row.expiresAt,
      spent_at: null,
    })
    .execute();
}

/** The attempt while it can still be completed: in this environment, unexpired, unspent, under the wrong-try limit. */
export async function findLiveAttempt(
  db: Db,
  environmentId: EnvironmentId,
  id: string,
  now: number,
): Promise<SignInAttemptRow | undefined> {
  return db
    .selectFrom('sign_in_attempts')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('spent_at', 'is', null)
    .where('expires_at', '>', now)
    .where('wrong_tries', '<', MAX_WRONG_TRIES)
    .executeTakeFirst();
}

/**
 * Completes the attempt: true for exactly one caller, and only while it is live. Run in the
 * transaction that spends the second factor, so a lost race spends nothing. The tries are not
 * looked at here: the caller holds one of them (takeTry), possibly the last.
 */
export async function spendSignInAttempt(db: Db, environmentId: EnvironmentId, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('sign_in_attempts')
    .set({ spent_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('spent_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Takes one of the attempt's tries before its code is compared: true while fewer than the limit
 * were taken. Taken first, atomically, so racing codes can never be compared more times than that.
 */
export async function takeTry(db: Db, environmentId: EnvironmentId, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('sign_in_attempts')
    .set((eb) => ({ wrong_tries: eb('wrong_tries', '+', 1) }))
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('spent_at', 'is', null)
    .where('expires_at', '>', now)
    .where('wrong_tries', '<', MAX_WRONG_TRIES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives a try back: the request was refused before its code was judged (a missing field, the throttle). */
export async function giveBackTry(db: Db, environmentId: EnvironmentId, id: string): Promise<void> {
  await db
    .updateTable('sign_in_attempts')
    .set((eb) => ({ wrong_tries: eb('wrong_tries', '-', 1) }))
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .where('wrong_tries', '>', 0)
    .execute();
}

/** Whether the attempt exists here and is dead only by its wrong tries (for the message that says so). */
export async function diedOfWrongTries(db: Db, environmentId: EnvironmentId, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('sign_in_attempts')
    .select('wrong_tries')
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined && row.wrong_tries >= MAX_WRONG_TRIES;
}

/**
 * Forgets the environment's attempts that can no longer do anything (expired ones: refused from then
 * on, spent or not). Called as attempts are issued, so the table holds about 10 minutes of sign-ins.
 */
export async function sweepSignInAttempts(db: Db, environmentId: EnvironmentId, now: number): Promise<void> {
  await db.deleteFrom('sign_in_attempts').where('environment_id', '=', environmentId).where('expires_at', '<=', now).execute();
}
