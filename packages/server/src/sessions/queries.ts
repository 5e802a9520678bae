import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction } from 'kysely';
import { announce } from '../db/changes.js';
import { lockForShare, lockForUpdate, type Store } from '../db/index.js';
import { reusableQuery } from '../db/reusable.js';
import type { Database, SessionsTable } from '../db/schema.js';
import { atomically, recordEvent } from '../db/events.js';
import { sessionData } from './event-data.js';

type Db = Kysely<Database> | Transaction<Database>;

// ---- signing keys
// A key signs from `activates_at` until `retired_at` (null: no successor scheduled yet).

export type SessionRow = SessionsTable;

/** With `shareLockOn`, a concurrent revocation waits for the caller's transaction (PostgreSQL; SQLite serializes writers). */
export async function findSession(db: Db, environmentId: EnvironmentId, sessionId: string, shareLockOn?: Store) {
  const query = db.selectFrom('sessions').selectAll().where('environment_id', '=', environmentId).where('id', '=', sessionId);
  return (shareLockOn ? lockForShare(shareLockOn, query) : query).executeTakeFirst();
}

const sessionWithEnvironment = reusableQuery(['environmentId', 'sessionId', 'kid'] as const, (db: Kysely<Database>, p) =>
  db
    .selectFrom('sessions')
    .innerJoin('environments', 'environments.id', 'sessions.environment_id')
    .innerJoin('users', (join) =>
      join.onRef('users.environment_id', '=', 'sessions.environment_id').onRef('users.id', '=', 'sessions.user_id'),
    )
    .selectAll('environments')
    .select([
      'users.email as user_email',
      'users.username as user_username',
      'users.first_name as user_first_name',
      'users.last_name as user_last_name',
      'users.image_url as user_image_url',
      'users.password_hash as user_password_hash',
      'users.email_verified as user_email_verified',
      'users.banned as user_banned',
      'users.public_metadata as user_public_metadata',
      'users.private_metadata as user_private_metadata',
      'users.unsafe_metadata as user_unsafe_metadata',
      'users.external_id as user_external_id',
      'users.last_sign_in_at as user_last_sign_in_at',
      'users.two_factor_enabled as user_two_factor_enabled',
      'users.created_at as user_created_at',
      'users.updated_at as user_updated_at',
      'sessions.user_id as session_user_id',
      'sessions.created_at as session_created_at',
      'sessions.last_active_at as session_last_active_at',
      'sessions.expires_at as session_expires_at',
      'sessions.revoked_at as session_revoked_at',
      'sessions.active_organization_id as session_active_organization_id',
    ])
    // The token's key as the database has it: another node's revocation may not have reached this one.
    .select((eb) =>
      eb
        .selectFrom('signing_keys')
        .select('signing_keys.revoked_at')
        .where('signing_keys.environment_id', '=', p.environmentId)
        .where('signing_keys.id', '=', p.kid)
        .as('key_revoked_at'),
    )
    .where('sessions.environment_id', '=', p.environmentId)
    .where('sessions.id', '=', p.sessionId),
);

const claimsUser = reusableQuery(['environmentId', 'userId'] as const, (db: Kysely<Database>, p) =>
  db
    .selectFrom('users')
    .select(['id', 'email', 'email_verified', 'first_name', 'last_name', 'username', 'image_url', 'public_metadata', 'created_at'])
    .where('environment_id', '=', p.environmentId)
    .where('id', '=', p.userId),
);

/** What a custom claims template may read of the user (sessions/claims-template.ts); read at every token issue, so compiled once. */
export async function findClaimsUser(db: Kysely<Database>, environmentId: EnvironmentId, userId: string) {
  return (await claimsUser(db, { environmentId, userId }))[0];
}

/**
 * The session with its environment and user, in one read: what verifying an access token needs, and
 * what GET /v1/me shows, on every request. `key_revoked_at` is the revocation of the token's key `kid`.
 */
export async function findSessionWithEnvironment(db: Kysely<Database>, environmentId: EnvironmentId, sessionId: string, kid: string) {
  return (await sessionWithEnvironment(db, { environmentId, sessionId, kid }))[0];
}

/** The compare-and-set both rotations share: the presented token must be current, the session not revoked. */
function rotationWrite(
  db: Db,
  environmentId: EnvironmentId,
  sessionId: string,
  rotation: { presentedHash: string; successorHash: string; generation: number; now: number },
) {
  return db
    .updateTable('sessions')
    .set({
      refresh_hash: rotation.successorHash,
      previous_hash: rotation.presentedHash,
      generation: rotation.generation,
      rotated_at: rotation.now,
      last_active_at: rotation.now,
    })
    .where('environment_id', '=', environmentId)
    .where('id', '=', sessionId)
    .where('refresh_hash', '=', rotation.presentedHash)
    .where('revoked_at', 'is', null);
}

/**
 * Rotates the refresh token, only if the presented one is still current (compare-and-set), so two
 * racing refreshes cannot both rotate. Returns whether this call rotated it.
 */
export async function rotateRefreshToken(
  db: Db,
  environmentId: EnvironmentId,
  sessionId: string,
  rotation: {
    presentedHash: string;
    successorHash: string;
    generation: number;
    now: number;
    /** Switches the active organization in the same write, when given. */
    activeOrganizationId?: string | null;
  },
): Promise<boolean> {
  const result = await rotationWrite(db, environmentId, sessionId, rotation)
    .$if(rotation.activeOrganizationId !== undefined, (q) => q.set({ active_organization_id: rotation.activeOrganizationId! }))
    .executeTakeFirst();
  const rotated = result.numUpdatedRows > 0n;
  // Only a switch changes what caches hold; a plain rotation is not announced (see below).
  if (rotated && rotation.activeOrganizationId !== undefined) announce(db, { kind: 'session', environmentId, sessionId });
  return rotated;
}

const rotateCurrent = reusableQuery(
  ['environmentId', 'sessionId', 'presentedHash', 'successorHash', 'generation', 'now', 'activeSince'] as const,
  (db: Kysely<Database>, p) => {
    const number = (placeholder: string) => placeholder as unknown as number; // a value at run time
    return rotationWrite(db, p.environmentId, p.sessionId, {
      presentedHash: p.presentedHash,
      successorHash: p.successorHash,
      generation: number(p.generation),
      now: number(p.now),
    })
      .where('expires_at', '>', number(p.now))
      .where('last_active_at', '>', number(p.activeSince))
      .returning(['user_id', 'active_organization_id', 'amr', 'first_factor_at', 'second_factor_at', 'created_at', 'actor']);
  },
);

/**
 * Not announced: a rotation changes the refresh hashes, which no cache holds, and the last activity,
 * which only grows. A cached copy that is older can only look inactive too soon, and the session
 * check reads the row again before refusing on inactivity (SessionService.verifyAccessToken). So a
 * refresh costs no change announcement, which with several nodes is a Redis call.
 *
 * The common refresh in one statement: rotates the presented token when it is the session's current
 * one and the session is live (not revoked, within its lifetime and its inactivity limit), and
 * returns what the new access token needs. Undefined when anything else holds; the caller then reads
 * the session and judges (grace window, reuse, expiry) as before.
 */
export async function rotateCurrentRefreshToken(
  db: Kysely<Database>,
  environmentId: EnvironmentId,
  sessionId: string,
  rotation: { presentedHash: string; successorHash: string; generation: number; now: number; inactivityMs: number },
): Promise<
  | {
      user_id: string;
      active_organization_id: string | null;
      amr: string;
      first_factor_at: number | null;
      second_factor_at: number | null;
      created_at: number;
      actor: string | null;
    }
  | undefined
> {
  const [row] = await rotateCurrent(db, {
    environmentId,
    sessionId,
    presentedHash: rotation.presentedHash,
    successorHash: rotation.successorHash,
    generation: rotation.generation,
    now: rotation.now,
    activeSince: rotation.now - rotation.inactivityMs,
  });
  return row;
}

/**
 * Writes a session's verified factors, if its amr is still `expectedAmr` (two verifications at once:
 * the loser's caller reads again). Not for a revoked session. Announced: the session check caches it.
 */
export async function recordSessionFactor(
  db: Db,
  environmentId: EnvironmentId,
  sessionId: string,
  change: { expectedAmr: string; amr: string; first_factor_at?: number; second_factor_at?: number },
): Promise<boolean> {
  const { expectedAmr, ...columns } = change;
  const result = await db
    .updateTable('sessions')
    .set(columns)
    .where('environment_id', '=', environmentId)
    .where('id', '=', sessionId)
    .where('amr', '=', expectedAmr)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  announce(db, { kind: 'session', environmentId, sessionId });
  return result.numUpdatedRows > 0n;
}

export async function setActiveOrganization(db: Db, environmentId: EnvironmentId, sessionId: string, organizationId: string | null) {
  await db
    .updateTable('sessions')
    .set({ active_organization_id: organizationId })
    .where('environment_id', '=', environmentId)
    .where('id', '=', sessionId)
    .execute();
  announce(db, { kind: 'session', environmentId, sessionId });
}

/** Clears the active organization only if it is still `organizationId` (a concurrent switch wins). */
export async function clearActiveOrganization(db: Db, environmentId: EnvironmentId, sessionId: string, organizationId: string) {
  await db
    .updateTable('sessions')
    .set({ active_organization_id: null })
    .where('environment_id', '=', environmentId)
    .where('id', '=', sessionId)
    .where('active_organization_id', '=', organizationId)
    .execute();
  announce(db, { kind: 'session', environmentId, sessionId });
}

/** Revokes one session: a single write. Returns whether a live session was revoked. */
export async function revokeSession(
  db: Db,
  environmentId: EnvironmentId,
  sessionId: string,
  now: number,
  userId?: string,
): Promise<boolean> {
  return atomically(db, async (db) => {
    let query = db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('environment_id', '=', environmentId)
      .where('id', '=', sessionId)
      .where('revoked_at', 'is', null);
    if (userId !== undefined) query = query.where('user_id', '=', userId);
    const revoked = await query.returningAll().executeTakeFirst();
    await deleteHandoffTokens(db, environmentId, { sessionId });
    announce(db, { kind: 'session', environmentId, sessionId });
    if (revoked) await recordEvent(db, environmentId, 'session.revoked', sessionData(revoked));
    return revoked !== undefined;
  });
}

/**
 * Locks the user's row until the transaction ends (PostgreSQL). The lock order of every transaction
 * that holds a user's row and any of their sessions: the user's row first, as a session's start
 * takes it (it stamps `last_sign_in_at` before it inserts the session). Two such transactions then
 * wait for one another in line, never in a circle.
 */
export async function lockSessionsOwner(
  store: Store,
  tx: Transaction<Database>,
  environmentId: EnvironmentId,
  userId: string,
): Promise<void> {
  // SQLite has one writer at a time: there is nothing to order, and nothing to run.
  if (store.dialect !== 'postgres') return;
  await lockForUpdate(
    store,
    tx.selectFrom('users').select('id').where('environment_id', '=', environmentId).where('id', '=', userId),
  ).execute();
}

/**
 * Revokes every session of a user, except `keepSessionId`; returns how many live ones it revoked.
 * The user's row is locked first (lockSessionsOwner): on PostgreSQL a session start that commits
 * while this waits is seen by the revoking statement, which begins after it, and one that comes
 * later waits for this commit. A session started beside a revoke-all can then never survive it
 * unseen (a hosted handoff re-reads its minting session after its start: auth/handoff.ts).
 */
export async function revokeUserSessions(
  store: Store,
  db: Db,
  environmentId: EnvironmentId,
  userId: string,
  live: { now: number; activeSince: number },
  keepSessionId?: string,
) {
  return atomically(db, async (db) => {
    await lockSessionsOwner(store, db, environmentId, userId);
    let query = db
      .updateTable('sessions')
      .set({ revoked_at: live.now })
      .where('environment_id', '=', environmentId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', live.now)
      .where('last_active_at', '>', live.activeSince);
    if (keepSessionId !== undefined) query = query.where('id', '!=', keepSessionId);
    const revoked = await query.returningAll().execute();
    await deleteHandoffTokens(db, environmentId, { userId, keepSessionId });
    // A second-factor attempt (auth/second-factor.ts) is a sign-in waiting to become a session, on a
    // first factor this revocation may be about (a reset password, an address proven by its owner).
    await db.deleteFrom('sign_in_attempts').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute();
    announce(db, { kind: 'user', environmentId, userId });
    for (const session of revoked) await recordEvent(db, environmentId, 'session.revoked', sessionData(session));
    return revoked.length;
  });
}

/**
 * A revoked session's pending hosted-page handoff tokens (hosted/) go with it, so none can become a
 * session later. The exchange also requires the minting session live; this keeps no token behind.
 */
async function deleteHandoffTokens(
  db: Db,
  environmentId: EnvironmentId,
  of: { sessionId: string } | { userId: string; keepSessionId: string | undefined },
) {
  let query = db.deleteFrom('handoff_tokens').where('environment_id', '=', environmentId);
  if ('sessionId' in of) query = query.where('session_id', '=', of.sessionId);
  else {
    query = query.where('user_id', '=', of.userId);
    const keep = of.keepSessionId;
    if (keep !== undefined) query = query.where((eb) => eb.or([eb('session_id', 'is', null), eb('session_id', '!=', keep)]));
  }
  await query.execute();
}

/** The user's live sessions: not revoked, within their lifetime, active recently enough. */
export async function listLiveSessions(db: Db, environmentId: EnvironmentId, userId: string, live: { now: number; activeSince: number }) {
  return db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'last_active_at', 'expires_at', 'user_agent', 'active_organization_id', 'amr', 'actor'])
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', live.now)
    .where('last_active_at', '>', live.activeSince)
    .orderBy('created_at', 'desc')
    .limit(500)
    .execute();
}
