import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { Database, SsoAttemptsTable, SsoConnectionsTable } from '../db/schema.js';
import { crossTenant } from '../db/tenant-scope.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertConnection(db: Db, environmentId: EnvironmentId, row: Omit<Insertable<SsoConnectionsTable>, 'environment_id'>) {
  await db
    .insertInto('sso_connections')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

export function listConnections(db: Db, environmentId: EnvironmentId) {
  return db.selectFrom('sso_connections').selectAll().where('environment_id', '=', environmentId).orderBy('id').execute();
}

export function findConnection(db: Db, environmentId: EnvironmentId, id: string) {
  return db.selectFrom('sso_connections').selectAll().where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
}

/**
 * The environment of a connection named in a callback path: the IdP's browser brings no credential.
 * What the request may then do is decided by the state or RelayState it carries, checked in that environment.
 */
export async function connectionEnvironment(db: Db, id: string): Promise<EnvironmentId | undefined> {
  const row = await db
    .selectFrom('sso_connections')
    .select('environment_id')
    .where('id', '=', id)
    .modifyEnd(crossTenant('an IdP callback names only the connection'))
    .executeTakeFirst();
  return row?.environment_id;
}

export async function updateConnection(db: Db, environmentId: EnvironmentId, id: string, patch: Updateable<SsoConnectionsTable>) {
  const result = await db.updateTable('sso_connections').set(patch).where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteConnection(db: Db, environmentId: EnvironmentId, id: string) {
  await db.deleteFrom('sso_identities').where('environment_id', '=', environmentId).where('connection_id', '=', id).execute();
  await db.deleteFrom('sso_attempts').where('environment_id', '=', environmentId).where('connection_id', '=', id).execute();
  await db.deleteFrom('sso_seen_assertions').where('environment_id', '=', environmentId).where('connection_id', '=', id).execute();
  const result = await db.deleteFrom('sso_connections').where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function insertAttempt(db: Db, environmentId: EnvironmentId, row: Omit<Insertable<SsoAttemptsTable>, 'environment_id'>) {
  await db
    .insertInto('sso_attempts')
    .values({ ...row, environment_id: environmentId })
    .execute();
}

/**
 * Forgets the environment's starts that can no longer do anything: the start has expired (its
 * state, nonce, verifier and request id are refused from then on) and so has any handoff token it
 * issued. Unknown and expired answer alike, so deleting changes no answer.
 */
export async function sweepAttempts(db: Db, environmentId: EnvironmentId, now: number): Promise<number> {
  const result = await db
    .deleteFrom('sso_attempts')
    .where('environment_id', '=', environmentId)
    .where('expires_at', '<=', now)
    .where((eb) => eb.or([eb('token_expires_at', 'is', null), eb('token_expires_at', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Consumes a live start by its state in one statement: two racing callbacks cannot both win. */
export function consumeAttemptByState(db: Db, environmentId: EnvironmentId, connectionId: string, stateHash: string, now: number) {
  return db
    .updateTable('sso_attempts')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('state_hash', '=', stateHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Reads a start by its state without consuming it (SAML: the request id is consumed by the ledger). */
export function findAttemptByState(db: Db, environmentId: EnvironmentId, connectionId: string, stateHash: string) {
  return db
    .selectFrom('sso_attempts')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('state_hash', '=', stateHash)
    .executeTakeFirst();
}

export async function consumeSamlRequest(db: Db, environmentId: EnvironmentId, connectionId: string, requestId: string, now: number) {
  const result = await db
    .updateTable('sso_attempts')
    .set({ consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('saml_request_id', '=', requestId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function rememberAssertion(db: Db, environmentId: EnvironmentId, connectionId: string, assertionId: string, expiresAt: number, now: number) {
  await db
    .deleteFrom('sso_seen_assertions')
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('expires_at', '<=', now)
    .execute();
  const result = await db
    .insertInto('sso_seen_assertions')
    .values({ environment_id: environmentId, connection_id: connectionId, assertion_id: assertionId, expires_at: expiresAt })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function setHandoff(db: Db, environmentId: EnvironmentId, attemptId: string, userId: string, tokenHash: string, expiresAt: number) {
  await db
    .updateTable('sso_attempts')
    .set({ user_id: userId, token_hash: tokenHash, token_expires_at: expiresAt })
    .where('environment_id', '=', environmentId)
    .where('id', '=', attemptId)
    .execute();
}

export function consumeHandoff(db: Db, environmentId: EnvironmentId, tokenHash: string, now: number) {
  return db
    .updateTable('sso_attempts')
    .set({ token_consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('token_hash', '=', tokenHash)
    // A link's token completes a link for its user; it never signs anyone in.
    .where('link_user_id', 'is', null)
    .where('token_consumed_at', 'is', null)
    .where('token_expires_at', '>', now)
    .returning(['user_id', 'connection_id'])
    .executeTakeFirst();
}

/** Whether the user still has an identity at this connection (one dropped since can sign no one in). */
export async function hasIdentityAt(db: Db, environmentId: EnvironmentId, connectionId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sso_identities')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export function findIdentity(db: Db, environmentId: EnvironmentId, connectionId: string, subject: string) {
  return db
    .selectFrom('sso_identities')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/** Records an identity; false when a racing first sign-in of the same subject linked it a moment ago. */
export async function insertIdentity(
  db: Db,
  environmentId: EnvironmentId,
  row: { id: string; connection_id: string; subject: string; user_id: string; email: string | null; email_trusted: boolean; now: number },
): Promise<boolean> {
  const result = await db
    .insertInto('sso_identities')
    .values({
      environment_id: environmentId,
      id: row.id,
      connection_id: row.connection_id,
      subject: row.subject,
      user_id: row.user_id,
      email: row.email,
      email_trusted: row.email_trusted ? 1 : 0,
      created_at: row.now,
      last_sign_in_at: row.now,
    })
    // Same key, same user: the first one wins and the caller reads it back.
    .onConflict((oc) => oc.columns(['environment_id', 'connection_id', 'subject']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function touchIdentity(db: Db, environmentId: EnvironmentId, connectionId: string, subject: string, email: string | null, now: number, trusted = false) {
  await db
    .updateTable('sso_identities')
    // Once a sign-in brings a trusted email, the identity no longer counts as an unvouched one.
    .set(trusted ? { last_sign_in_at: now, email, email_trusted: 1 } : { last_sign_in_at: now, email })
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('subject', '=', subject)
    .execute();
}

export type AttemptRow = NonNullable<Awaited<ReturnType<typeof findAttemptByState>>>;

export async function deleteIdentity(db: Db, environmentId: EnvironmentId, connectionId: string, subject: string) {
  await db
    .deleteFrom('sso_identities')
    .where('environment_id', '=', environmentId)
    .where('connection_id', '=', connectionId)
    .where('subject', '=', subject)
    .execute();
}
