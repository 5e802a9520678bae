import type { Kysely, Selectable, Transaction } from 'kysely';
import { reusableQuery, reusableStatement } from '../db/reusable.js';
import type { Database, PasskeyChallengesTable, PasskeysTable } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export type PasskeyRow = Selectable<PasskeysTable>;
export type ChallengeRow = Selectable<PasskeyChallengesTable>;

// ---- credentials

export function listPasskeys(db: Db, environmentId: EnvironmentId, userId: string): Promise<PasskeyRow[]> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
}

/** How many passkeys the user has: a passkey counts as a second factor (twoFactorEnabled, `factors`). */
export async function countPasskeys(db: Db, environmentId: EnvironmentId, userId: string): Promise<number> {
  const row = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export function findPasskey(db: Db, environmentId: EnvironmentId, userId: string, id: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The credential an assertion names, in this environment only: another environment's never matches. */
export function findByCredentialId(db: Db, environmentId: EnvironmentId, credentialId: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
}

// A sign-in's statements are compiled once (db/reusable.ts): Kysely's building and compiling cost
// as much as the queries themselves on this path.

const credentialWithHandle = reusableQuery(['environmentId', 'credentialId'] as const, (db: Kysely<Database>, p) =>
  db
    .selectFrom('passkeys')
    .leftJoin('passkey_user_handles as h', (join) =>
      join.onRef('h.environment_id', '=', 'passkeys.environment_id').onRef('h.user_id', '=', 'passkeys.user_id'),
    )
    .selectAll('passkeys')
    .select('h.handle as owner_handle')
    .where('passkeys.environment_id', '=', p.environmentId)
    .where('passkeys.credential_id', '=', p.credentialId),
);

/** findByCredentialId, with the owner's user handle (null when they have none). */
export async function findByCredentialIdWithHandle(
  db: Db,
  environmentId: EnvironmentId,
  credentialId: string,
): Promise<(PasskeyRow & { owner_handle: string | null }) | undefined> {
  return (await credentialWithHandle(db as Kysely<Database>, { environmentId, credentialId }))[0];
}

export async function insertPasskey(db: Db, row: PasskeyRow): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

export async function renamePasskey(db: Db, environmentId: EnvironmentId, userId: string, id: string, name: string): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ name })
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deletePasskey(db: Db, environmentId: EnvironmentId, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteAllPasskeys(db: Db, environmentId: EnvironmentId, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Records a use: the counter moves only forward (compare-and-set on the value read), so two
 * concurrent uses of one cloned counter value cannot both pass.
 */
export async function recordUse(
  db: Db,
  environmentId: EnvironmentId,
  id: string,
  change: { expectedCounter: number; counter: number; backedUp: boolean; now: number },
): Promise<boolean> {
  const values: UseValues = {
    environmentId,
    id,
    expectedCounter: change.expectedCounter,
    counter: change.counter,
    backedUp: change.backedUp ? 1 : 0,
    now: change.now,
  };
  const result = await db.executeQuery(recordUseQuery(db as Kysely<Database>, values));
  return (result.numAffectedRows ?? 0n) > 0n;
}

export interface UseValues {
  environmentId: EnvironmentId;
  id: string;
  expectedCounter: number;
  counter: number;
  backedUp: number;
  now: number;
}
/** recordUse as a statement, also run in another transaction (a passkey sign-in's session start): it changes one row, or none. */
export const recordUseQuery = reusableStatement(
  ['environmentId', 'id', 'expectedCounter', 'counter', 'backedUp', 'now'],
  (db: Kysely<Database>, p: UseValues) =>
    db
      .updateTable('passkeys')
      .set({ counter: p.counter, backed_up: p.backedUp, last_used_at: p.now })
      .where('environment_id', '=', p.environmentId)
      .where('id', '=', p.id)
      .where('counter', '=', p.expectedCounter),
);

// ---- user handles

export async function findUserHandle(db: Db, environmentId: EnvironmentId, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('passkey_user_handles')
    .select('handle')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.handle;
}

/** Stores `handle` unless the user has one already (a concurrent first registration); answers the one kept. */
export async function ensureUserHandle(db: Db, environmentId: EnvironmentId, userId: string, handle: string): Promise<string> {
  await db
    .insertInto('passkey_user_handles')
    .values({ environment_id: environmentId, user_id: userId, handle })
    .onConflict((oc) => oc.columns(['environment_id', 'user_id']).doNothing())
    .execute();
  return (await findUserHandle(db, environmentId, userId)) ?? handle;
}

// ---- challenges

const CHALLENGE_COLUMNS = [
  'environment_id',
  'attempt_id',
  'purpose',
  'user_id',
  'challenge',
  'rp_id',
  'created_at',
  'expires_at',
] as const satisfies readonly (keyof ChallengeRow)[];

const putChallengeStatement = reusableStatement(CHALLENGE_COLUMNS, (db: Kysely<Database>, p: ChallengeRow) =>
  db
    .insertInto('passkey_challenges')
    .values(p)
    .onConflict((oc) =>
      oc.columns(['environment_id', 'attempt_id']).doUpdateSet({
        purpose: p.purpose,
        user_id: p.user_id,
        challenge: p.challenge,
        rp_id: p.rp_id,
        created_at: p.created_at,
        expires_at: p.expires_at,
      }),
    ),
);

/** The attempt's challenge, replacing the previous one (which is void from now on). */
export async function putChallenge(db: Db, row: ChallengeRow): Promise<void> {
  await db.executeQuery(putChallengeStatement(db as Kysely<Database>, row));
}

const takeChallengeOfUser = reusableQuery(['environmentId', 'attemptId', 'purpose', 'userId'] as const, (db: Kysely<Database>, p) =>
  db
    .deleteFrom('passkey_challenges')
    .where('environment_id', '=', p.environmentId)
    .where('attempt_id', '=', p.attemptId)
    .where('purpose', '=', p.purpose as unknown as ChallengeRow['purpose'])
    .where('user_id', '=', p.userId)
    .returningAll(),
);

/**
 * Spends the attempt's challenge when it is of this purpose and for this user, in one statement:
 * exactly one of any number of concurrent verifies gets the row. Another ceremony's challenge is
 * neither answered nor spent. Expiry is the caller's to check.
 */
export async function takeChallenge(
  db: Db,
  environmentId: EnvironmentId,
  attemptId: string,
  purpose: 'registration' | 'authentication',
  userId: string,
): Promise<ChallengeRow | undefined> {
  return (await takeChallengeOfUser(db as Kysely<Database>, { environmentId, attemptId, purpose, userId }))[0];
}

const sweepChallenges = reusableQuery(['environmentId', 'now'] as const, (db: Kysely<Database>, p) =>
  db
    .deleteFrom('passkey_challenges')
    .where('environment_id', '=', p.environmentId)
    .where('expires_at', '<', p.now as unknown as number),
);

/** Housekeeping: the environment's expired challenges, answered sign-ins' rows included. */
export async function deleteExpiredChallenges(db: Db, environmentId: EnvironmentId, now: number): Promise<void> {
  await sweepChallenges(db as Kysely<Database>, { environmentId, now });
}

// ---- spent sign-in challenges

const SPENT_VALUES = ['environment_id', 'attempt_id', 'challenge', 'rp_id', 'created_at', 'expires_at'] as const;
type SpentValues = Pick<ChallengeRow, (typeof SPENT_VALUES)[number]>;
/**
 * Records a discoverable sign-in's challenge (sign-in-challenges.ts) as answered: the statement
 * changes one row the first time and none after, so of any number of verifies of one attempt, one
 * can pass. Swept with the other challenges once it has expired.
 */
export const spendSignInQuery = reusableStatement(SPENT_VALUES, (db: Kysely<Database>, p: SpentValues) =>
  db
    .insertInto('passkey_challenges')
    .values({ ...p, purpose: 'spent', user_id: null })
    .onConflict((oc) => oc.columns(['environment_id', 'attempt_id']).doNothing()),
);
