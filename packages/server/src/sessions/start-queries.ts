/**
 * A session's start: what a sign-in writes (of every kind: password, link, code, SSO, invitation),
 * in one statement on PostgreSQL (one transaction with a sign-in's proof writes: a passkey's, a
 * password's) and one synchronous transaction on SQLite, compiled once.
 */
import type { EnvironmentId } from '../lib/ids.js';
import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { announce, eventRecorded } from '../db/changes.js';
import { proofHolds } from './proof-writes.js';
import { sqliteTransaction } from '../db/index.js';
import { columnsOf, selectionOf } from '../db/insert-select.js';
import { reusableStatement } from '../db/reusable.js';
import type { Database } from '../db/schema.js';
import { eventRow, eventValues } from '../db/events.js';
import { sessionData } from './event-data.js';
import type { SessionRow } from './queries.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Stamps a sign-in on the user's row (and locks it), unless the user is banned; answers what the session checks and passes on. */
function stampSignIn(db: Pick<Db, 'updateTable'>, environmentId: EnvironmentId, userId: string, now: number) {
  return db
    .updateTable('users')
    .set({ last_sign_in_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .where('banned', '=', 0)
    .returning(['id', 'banned', 'email', 'email_key', 'email_verified']);
}

export type SignInUser = Pick<Database['users'], 'id' | 'banned' | 'email' | 'email_key' | 'email_verified'>;

/** A proof write changed no row: the writes before it commit, nothing else is written. */
const REFUSED = Symbol('refused');

/**
 * A sign-in's writes, atomically: stamps `last_sign_in_at` on the user's row, which locks it, then
 * inserts the session and its `session.created` event. A ban sets its flag on that row, then
 * revokes: a ban committed first stops the stamp (`banned = 0`), and nothing is written; a later one
 * waits for this commit, and its revocation finds this session. Answers the user, `'banned'`, or
 * undefined when the user is gone.
 *
 * On PostgreSQL this is one statement (data-modifying CTEs, run to completion together or not at
 * all): one round trip where a transaction took five. On SQLite, one synchronous transaction.
 *
 * `proofWrites` (a passkey sign-in's: its challenge spent, its counter moved; a password sign-in's:
 * the hash it verified still the account's) run first, in order,
 * in the same transaction, and must each change exactly one row. At the first that changes none,
 * the answer is `'refused'`, with the writes before it committed (a challenge stays spent when its
 * counter refused) and no session. They also stay written when the user turns out banned or gone.
 */
export async function startSession(
  db: Kysely<Database>,
  environmentId: EnvironmentId,
  session: Omit<SessionRow, 'environment_id'>,
  proofWrites: readonly CompiledQuery[] = [],
): Promise<SignInUser | 'banned' | 'refused' | undefined> {
  const created = eventRow(environmentId, 'session.created', sessionData({ ...session, environment_id: environmentId }));
  const values: StartValues = {
    ...session,
    environment_id: environmentId,
    event_id: created.id,
    event_type: created.type,
    event_body: created.body,
    event_created_at: created.createdAt,
  };
  const sqlite = sqliteTransaction(db);
  let user: SignInUser | typeof REFUSED | undefined;
  if (sqlite) {
    user = await sqlite((_, run) => {
      for (const write of proofWrites) if (run.changes(write) !== 1) return REFUSED;
      const user = run.rows(stampStatement(db, values))[0];
      if (user) {
        run.changes(sessionInsertStatement(db, values));
        run.changes(eventInsertStatement(db, values));
      }
      return user;
    });
  } else if (proofWrites.length === 0) {
    user = (await db.executeQuery(startSessionStatement(db, values))).rows[0];
  } else {
    user = await db.transaction().execute(async (tx) => {
      // The user's row first, as every change of a user's factors takes it (a deletion cascading
      // to their passkeys, say): the proof's writes after it cannot deadlock with those.
      await tx.executeQuery(lockUserStatement(db, { environment_id: environmentId, user_id: session.user_id }));
      if (!(await proofHolds(tx, proofWrites))) return REFUSED;
      return (await tx.executeQuery(startSessionStatement(db, values))).rows[0];
    });
  }
  if (user === REFUSED) return 'refused';
  if (!user) return (await isBanned(db, environmentId, session.user_id)) ? 'banned' : undefined;
  eventRecorded(db, environmentId);
  announce(db, { kind: 'user', environmentId, userId: user.id });
  return user;
}

// startSession's statements, compiled once per database handle (a sign-in's only other statement
// reads the user): Kysely built and compiled them at every sign-in, tens of microseconds each. Each
// builder receives placeholders typed as the values they stand for (db/reusable.ts).

type SessionColumn = keyof SessionRow;
/** Every column of a new session, each once (the type makes this list complete). */
const SESSION_COLUMNS = Object.keys({
  environment_id: true,
  id: true,
  user_id: true,
  refresh_hash: true,
  previous_hash: true,
  generation: true,
  rotated_at: true,
  created_at: true,
  last_active_at: true,
  expires_at: true,
  revoked_at: true,
  active_organization_id: true,
  user_agent: true,
  amr: true,
  first_factor_at: true,
  second_factor_at: true,
  actor: true,
} satisfies Record<SessionColumn, true>) as SessionColumn[];

interface EventValues {
  environment_id: EnvironmentId;
  event_id: string;
  event_type: string;
  event_body: string;
  event_created_at: number;
}
const EVENT_VALUES = [
  'environment_id',
  'event_id',
  'event_type',
  'event_body',
  'event_created_at',
] as const satisfies readonly (keyof EventValues)[];

type StampValues = Pick<SessionRow, 'environment_id' | 'user_id' | 'created_at'>;
const STAMP_VALUES = ['environment_id', 'user_id', 'created_at'] as const satisfies readonly (keyof StampValues)[];

type StartValues = SessionRow & EventValues;

/** The session's row, and nothing else of `p` (which also holds the event's values). */
function sessionRowOf(p: SessionRow): { [Column in SessionColumn]: SessionRow[Column] } {
  return Object.fromEntries(SESSION_COLUMNS.map((column) => [column, p[column]])) as { [Column in SessionColumn]: SessionRow[Column] };
}

function eventValuesOf(p: EventValues) {
  return eventValues(p.environment_id, { id: p.event_id, type: p.event_type, body: p.event_body, createdAt: p.event_created_at });
}

function stampOf(db: Pick<Db, 'updateTable'>, p: StampValues) {
  return stampSignIn(db, p.environment_id, p.user_id, p.created_at);
}

/** PostgreSQL: the stamp, the session inserted from its result and the event from the session's, one statement. */
const startSessionStatement = reusableStatement(
  [...new Set([...SESSION_COLUMNS, ...EVENT_VALUES])],
  (db: Kysely<Database>, p: StartValues) => {
    const row = sessionRowOf(p);
    const event = eventValuesOf(p);
    return db
      .with('stamped', (db) => stampOf(db, p))
      .with('created', (db) =>
        db
          .insertInto('sessions')
          .columns(columnsOf(row))
          .expression((eb) => eb.selectFrom('stamped').select(selectionOf(row)))
          .returning('id'),
      )
      .with('recorded', (db) =>
        db
          .insertInto('webhook_events')
          .columns(columnsOf(event))
          .expression((eb) => eb.selectFrom('created').select(selectionOf(event))),
      )
      .selectFrom('stamped')
      .selectAll();
  },
);

/** PostgreSQL, before a proof's writes: the user's row, locked. */
const lockUserStatement = reusableStatement(
  ['environment_id', 'user_id'] as const,
  (db: Kysely<Database>, p: Pick<SessionRow, 'environment_id' | 'user_id'>) =>
    db.selectFrom('users').select('id').where('environment_id', '=', p.environment_id).where('id', '=', p.user_id).forUpdate(),
);

/** SQLite: the same three writes as statements of one synchronous transaction. */
const stampStatement = reusableStatement(STAMP_VALUES, (db: Kysely<Database>, p: StampValues) => stampOf(db, p));
const sessionInsertStatement = reusableStatement(SESSION_COLUMNS, (db: Kysely<Database>, p: SessionRow) =>
  db.insertInto('sessions').values(sessionRowOf(p)),
);
const eventInsertStatement = reusableStatement(EVENT_VALUES, (db: Kysely<Database>, p: EventValues) =>
  db.insertInto('webhook_events').values(eventValuesOf(p)),
);

async function isBanned(db: Db, environmentId: EnvironmentId, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('banned')
    .where('environment_id', '=', environmentId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row?.banned === 1;
}
