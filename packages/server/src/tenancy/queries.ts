import type { EnvironmentId } from '../lib/ids.js';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { crossTenant } from '../db/tenant-scope.js';
import type { Environment, EnvironmentSettings } from './settings.js';

type Db = Kysely<Database> | Transaction<Database>;

// Credential look-ups find the environment, so they are the one place that cannot take an
// environmentId: the key hash is what identifies the tenant.
export async function findEnvironmentByPublishableKeyHash(db: Db, keyHash: string) {
  return db.selectFrom('environments').selectAll().where('publishable_key_hash', '=', keyHash).executeTakeFirst();
}

export async function findLiveSecretKeyByHash(db: Db, keyHash: string) {
  return db
    .selectFrom('secret_keys')
    .innerJoin('environments', 'environments.id', 'secret_keys.environment_id')
    .selectAll('environments')
    .select(['secret_keys.id as secret_key_id', 'secret_keys.key_hash as secret_key_hash'])
    .where('secret_keys.key_hash', '=', keyHash)
    .where('secret_keys.revoked_at', 'is', null)
    .modifyEnd(crossTenant('a secret key is found by its hash, which is how its environment is found'))
    .executeTakeFirst();
}

/** The look-up of an id that came from a request: environments is an instance table. */
export async function findEnvironment(db: Db, environmentId: string) {
  return db.selectFrom('environments').selectAll().where('id', '=', environmentId as EnvironmentId).executeTakeFirst();
}

export async function updateEnvironmentSettings(db: Db, environmentId: EnvironmentId, settings: EnvironmentSettings, now: number) {
  await db
    .updateTable('environments')
    .set({ settings: JSON.stringify(settings), updated_at: now })
    .where('id', '=', environmentId)
    .execute();
}

export async function insertSecretKey(
  db: Db,
  environmentId: EnvironmentId,
  key: { id: string; keyHash: string; hint: string; createdAt: number },
) {
  await db
    .insertInto('secret_keys')
    .values({
      environment_id: environmentId,
      id: key.id,
      key_hash: key.keyHash,
      hint: key.hint,
      created_at: key.createdAt,
      revoked_at: null,
    })
    .execute();
}

export async function listSecretKeys(db: Db, environmentId: EnvironmentId) {
  return db
    .selectFrom('secret_keys')
    .select(['id', 'hint', 'created_at', 'revoked_at'])
    .where('environment_id', '=', environmentId)
    .orderBy('id')
    .execute();
}

/** Returns whether a live key was revoked. */
export async function revokeSecretKey(db: Db, environmentId: EnvironmentId, keyId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('secret_keys')
    .set({ revoked_at: now })
    .where('environment_id', '=', environmentId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertProject(db: Db, project: { id: string; name: string; createdAt: number }) {
  await db.insertInto('projects').values({ id: project.id, name: project.name, created_at: project.createdAt }).execute();
}

export async function insertEnvironment(db: Db, environment: Environment & { publishableKeyHash: string; createdAt: number }) {
  await db
    .insertInto('environments')
    .values({
      id: environment.id,
      project_id: environment.projectId,
      type: environment.type,
      publishable_key: environment.publishableKey,
      publishable_key_hash: environment.publishableKeyHash,
      settings: JSON.stringify(environment.settings),
      created_at: environment.createdAt,
      updated_at: environment.createdAt,
    })
    .execute();
}

export async function findProject(db: Db, projectId: string) {
  return db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
}

/** The instance_meta key naming the reserved project whose users are the operators (operators/). */
export const OPERATORS_PROJECT_KEY = 'operators_project';

/** Projects the platform API shows: every one but the operators' reserved project. */
function visibleProjects(db: Db) {
  return db
    .selectFrom('projects')
    .where('id', 'not in', db.selectFrom('instance_meta').select('value').where('key', '=', OPERATORS_PROJECT_KEY));
}

export async function listProjects(db: Db, limit: number, afterId: string | undefined) {
  let query = visibleProjects(db).selectAll().orderBy('id').limit(limit);
  if (afterId) query = query.where('id', '>', afterId);
  return query.execute();
}

export async function listEnvironmentsOfProjects(db: Db, projectIds: string[]) {
  if (projectIds.length === 0) return [];
  return db.selectFrom('environments').selectAll().where('project_id', 'in', projectIds).orderBy('type').execute();
}

export async function countProjects(db: Db): Promise<number> {
  const row = await visibleProjects(db)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function renameProject(db: Db, projectId: string, name: string): Promise<boolean> {
  const result = await db.updateTable('projects').set({ name }).where('id', '=', projectId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The project row, for a transaction that changes the project or its environments (lock it with lockForUpdate). */
export function selectProjectForChange(db: Db, projectId: string) {
  return db.selectFrom('projects').selectAll().where('id', '=', projectId);
}

/** The project's environment rows, for a transaction that changes them (lock them with lockForUpdate). */
export function selectEnvironmentsOfProjectForChange(db: Db, projectId: string) {
  return db.selectFrom('environments').selectAll().where('project_id', '=', projectId).orderBy('type');
}

/**
 * Every table that holds an environment's data, children before the tables they reference, so
 * deleting in this order never trips a foreign key. A test compares it with the schema: a new
 * tenant table must be added here, or deleting a project would fail or leave its rows behind.
 */
export const ENVIRONMENT_DATA_TABLES = [
  'api_keys',
  'machines',
  'actor_tokens',
  'sso_seen_assertions',
  'sso_attempts',
  'sso_identities',
  'sso_connections',
  'webhook_deliveries',
  'webhook_events',
  'webhook_endpoints',
  'organization_membership_requests',
  'organization_domains',
  'organization_invitations',
  'organization_members',
  'organization_roles',
  'organizations',
  'sessions',
  'sign_in_attempts',
  'passkey_challenges',
  'passkeys',
  'passkey_user_handles',
  'user_backup_codes',
  'user_totp',
  'flow_tokens',
  'sign_up_attempts',
  'handoff_tokens',
  'monthly_active_users',
  'email_outbox',
  'signing_keys',
  'secret_keys',
  'users',
] as const satisfies readonly (keyof Database)[];

/** Deletes every row of the environment's data, then the environment itself. */
export async function deleteEnvironmentAndData(db: Db, environmentId: EnvironmentId): Promise<void> {
  for (const table of ENVIRONMENT_DATA_TABLES) {
    await db
      .deleteFrom(table as 'users')
      .where('environment_id', '=', environmentId)
      .execute();
  }
  await db.deleteFrom('environments').where('id', '=', environmentId).execute();
}

export async function deleteProjectRow(db: Db, projectId: string): Promise<void> {
  await db.deleteFrom('projects').where('id', '=', projectId).execute();
}
