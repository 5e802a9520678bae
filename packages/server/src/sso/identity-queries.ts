/** SQL for the identities a user sees and unlinks (GET/DELETE /v1/me/identities). */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A user's identities with their connection's type and config (for the provider's name), oldest first. */
export function listIdentitiesOfUser(db: Db, environmentId: EnvironmentId, userId: string) {
  return db
    .selectFrom('sso_identities as i')
    .innerJoin('sso_connections as c', (join) => join.onRef('c.environment_id', '=', 'i.environment_id').onRef('c.id', '=', 'i.connection_id'))
    .select(['i.id', 'i.connection_id', 'i.subject', 'i.email', 'i.email_trusted', 'i.created_at', 'i.user_id', 'c.type', 'c.config'])
    .where('i.environment_id', '=', environmentId)
    .where('i.user_id', '=', userId)
    .orderBy('i.created_at')
    .orderBy('i.id')
    .execute();
}

export type IdentityListRow = Awaited<ReturnType<typeof listIdentitiesOfUser>>[number];

export async function deleteIdentityOfUser(db: Db, environmentId: EnvironmentId, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sso_identities')
    .where('environment_id', '=', environmentId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Holds a link's provider answer on its start, behind a one-time token (hashed). */
export async function holdLink(
  db: Db,
  environmentId: EnvironmentId,
  attemptId: string,
  link: { subject: string; email: string | null; emailTrusted: boolean; tokenHash: string; expiresAt: number },
) {
  await db
    .updateTable('sso_attempts')
    .set({ link_subject: link.subject, link_email: link.email, link_email_trusted: link.emailTrusted ? 1 : 0, token_hash: link.tokenHash, token_expires_at: link.expiresAt })
    .where('environment_id', '=', environmentId)
    .where('id', '=', attemptId)
    .where('link_user_id', 'is not', null)
    .execute();
}

/** Consumes a link's token, only for the user who started it, in one statement. */
export function consumeLink(db: Db, environmentId: EnvironmentId, tokenHash: string, userId: string, now: number) {
  return db
    .updateTable('sso_attempts')
    .set({ token_consumed_at: now })
    .where('environment_id', '=', environmentId)
    .where('token_hash', '=', tokenHash)
    .where('link_user_id', '=', userId)
    .where('token_consumed_at', 'is', null)
    .where('token_expires_at', '>', now)
    .returning(['connection_id', 'link_subject', 'link_email', 'link_email_trusted'])
    .executeTakeFirst();
}
