import { compileSessionClaims } from './claims-template.js';
import { newEnvironmentId } from '../lib/ids.js';
import type { CreatedSecretKey } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { announce, changeFeed, inTransaction } from '../db/changes.js';
import { lockForUpdate, type Store } from '../db/index.js';
import { apiError, notFound } from '../lib/errors.js';
import { normalizeDomain, normalizeOrigin } from './origin.js';
import { constantTimeEqual, newId, newSecret, sha256Hex } from '../lib/crypto.js';
import type { TenancyCache } from './cache.js';
import * as q from './queries.js';
import { newEnvironmentSettings, toEnvironment, type Environment, type EnvironmentSettings, type EnvironmentType, type TokenAlgorithm } from './settings.js';

type Db = Kysely<Database> | Transaction<Database>;

const ENVIRONMENT_TYPES: EnvironmentType[] = ['development', 'production'];
const KEY_ENV_TAG: Record<EnvironmentType, string> = { development: 'test', production: 'live' };

export type { CreatedSecretKey };

export interface SettingsPatch {
  domain?: string | null;
  callbackOrigins?: string[];
  authMethods?: Partial<EnvironmentSettings['authMethods']>;
  signUp?: boolean;
  accessTokenTtlSeconds?: number;
  tokenAlgorithm?: TokenAlgorithm;
  rateLimitPerMinute?: number | null;
  sessionLifetimeSeconds?: number;
  sessionInactivitySeconds?: number;
  usersCanCreateOrganizations?: boolean;
  emailVerification?: EnvironmentSettings['emailVerification'];
  mfa?: EnvironmentSettings['mfa'];
  sessionClaims?: Record<string, unknown> | null;
}

export function secretKeyHint(secretKey: string): string {
  return secretKey.slice(-4);
}

export interface TenancyServiceOptions {
  /** Look-ups go through it; without one every look-up reads the database. */
  cache?: TenancyCache | undefined;
}

export class TenancyService {
  private readonly cache: TenancyCache | undefined;

  constructor(
    private readonly store: Store,
    options: TenancyServiceOptions = {},
  ) {
    this.cache = options.cache;
  }

  /** Announces a committed change, so every cache (here and, through Redis, on other nodes) drops it. */
  private changed(environmentId: string): void {
    changeFeed(this.store.db).publish({ kind: 'environment', environmentId });
  }

  private get db() {
    return this.store.db;
  }

  async resolvePublishableKey(presented: string): Promise<Environment | undefined> {
    const hash = sha256Hex(presented);
    const cached = this.cache?.getPublishable(hash);
    if (cached) return cached;
    const generation = this.cache?.generation ?? 0;
    const row = await q.findEnvironmentByPublishableKeyHash(this.db, hash);
    if (!row || !constantTimeEqual(row.publishable_key_hash, hash)) return undefined;
    const environment = toEnvironment(row);
    this.cache?.setPublishable(hash, environment, generation);
    return environment;
  }

  async resolveSecretKey(presented: string): Promise<{ environment: Environment; secretKeyId: string } | undefined> {
    const hash = sha256Hex(presented);
    const cached = this.cache?.getSecret(hash);
    if (cached) return cached;
    const generation = this.cache?.generation ?? 0;
    const row = await q.findLiveSecretKeyByHash(this.db, hash);
    if (!row || !constantTimeEqual(row.secret_key_hash, hash)) return undefined;
    const resolved = { environment: toEnvironment(row), secretKeyId: row.secret_key_id };
    this.cache?.setSecret(hash, resolved, generation);
    return resolved;
  }

  /** Cached: for reads on the request path. Read-modify-write paths read the row in their transaction. */
  async getEnvironment(environmentId: string): Promise<Environment> {
    const cached = this.cache?.getEnvironment(environmentId);
    if (cached) return cached;
    const generation = this.cache?.generation ?? 0;
    const row = await q.findEnvironment(this.db, environmentId);
    if (!row) throw notFound(`Environment ${environmentId}`);
    const environment = toEnvironment(row);
    this.cache?.setEnvironment(environmentId, environment, generation);
    return environment;
  }

  /** Creates a project with its two environments and one secret key for each, shown only here. */
  async createProject(input: { name: string; domain?: string | null | undefined }) {
    const { project, environments } = await this.createProjectWithSecretKeys(input, ENVIRONMENT_TYPES);
    return { project, environments: environments.map((e) => ({ ...e, secretKey: e.secretKey! })) };
  }

  /**
   * Creates a project with its two environments, and a secret key (shown only here) for the
   * environment types listed; the others get theirs when an operator asks for one.
   */
  async createProjectWithSecretKeys(
    input: { name: string; domain?: string | null | undefined },
    secretKeysFor: readonly EnvironmentType[],
  ) {
    const domain = input.domain == null ? null : validDomain(input.domain);
    const now = Date.now();
    const project = { id: newId('proj'), name: input.name, createdAt: now };
    const environments = ENVIRONMENT_TYPES.map((type) => {
      const publishableKey = newSecret(`pk_${KEY_ENV_TAG[type]}_`, 24);
      const secretKey = secretKeysFor.includes(type) ? newSecret(`sk_${KEY_ENV_TAG[type]}_`) : undefined;
      const environment: Environment = {
        id: newEnvironmentId(),
        projectId: project.id,
        type,
        publishableKey,
        settings: { ...newEnvironmentSettings(), domain },
      };
      return { environment, secretKey, secretKeyId: newId('sk', environment.id) };
    });

    await this.db.transaction().execute(async (tx) => {
      await q.insertProject(tx, project);
      for (const { environment, secretKey, secretKeyId } of environments) {
        await q.insertEnvironment(tx, {
          ...environment,
          publishableKeyHash: sha256Hex(environment.publishableKey),
          createdAt: now,
        });
        if (secretKey === undefined) continue;
        await q.insertSecretKey(tx, environment.id, {
          id: secretKeyId,
          keyHash: sha256Hex(secretKey),
          hint: secretKeyHint(secretKey),
          createdAt: now,
        });
      }
    });
    return { project, environments };
  }

  async countProjects(): Promise<number> {
    return q.countProjects(this.db);
  }

  /** The name and logo every email of the environment shows, read in the caller's transaction (`db` may be one). */
  async branding(db: Db, environment: Environment): Promise<{ projectName: string; logoUrl: string | null }> {
    const project = await q.findProject(db, environment.projectId);
    if (!project) throw notFound(`Project ${environment.projectId}`);
    // Set by PUT /v1/platform/projects/{id}/logo, after the same checks as any upload.
    return { projectName: project.name, logoUrl: project.logo_url };
  }

  async getProject(projectId: string) {
    const project = await q.findProject(this.db, projectId);
    if (!project) throw notFound(`Project ${projectId}`);
    const environments = (await q.listEnvironmentsOfProjects(this.db, [project.id])).map(toEnvironment);
    return { project, environments };
  }

  async listProjects(limit: number, afterId: string | undefined) {
    const projects = await q.listProjects(this.db, limit + 1, afterId);
    const page = projects.slice(0, limit);
    const environments = (
      await q.listEnvironmentsOfProjects(
        this.db,
        page.map((p) => p.id),
      )
    ).map(toEnvironment);
    return {
      items: page.map((project) => ({ project, environments: environments.filter((e) => e.projectId === project.id) })),
      hasMore: projects.length > limit,
    };
  }

  /** Renames the project and/or sets the domain of both its environments, in one transaction. */
  async updateProject(projectId: string, patch: { name?: string | undefined; domain?: string | null | undefined }) {
    const domain = patch.domain === undefined ? undefined : patch.domain === null ? null : validDomain(patch.domain);
    return inTransaction(this.db, async (tx) => {
      const project = await lockForUpdate(this.store, q.selectProjectForChange(tx, projectId)).executeTakeFirst();
      if (!project) throw notFound(`Project ${projectId}`);
      if (patch.name !== undefined) await q.renameProject(tx, projectId, patch.name);
      let environments = (await lockForUpdate(this.store, q.selectEnvironmentsOfProjectForChange(tx, projectId)).execute()).map(
        toEnvironment,
      );
      if (domain !== undefined) {
        const now = Date.now();
        environments = environments.map((e) => ({ ...e, settings: { ...e.settings, domain } }));
        for (const environment of environments) {
          await q.updateEnvironmentSettings(tx, environment.id, environment.settings, now);
          announce(tx, { kind: 'environment', environmentId: environment.id });
        }
      }
      return { project: { ...project, name: patch.name ?? project.name }, environments };
    });
  }

  /**
   * Deletes the project, both its environments and everything in them (users, sessions,
   * organizations, keys, the email outbox, usage) in one transaction. Once it commits, every cache,
   * here and on other nodes, drops the environments, so their keys and tokens stop working at once.
   * Stored images are not records: their bytes stay in the object store, unreferenced.
   */
  async deleteProject(projectId: string): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      const project = await lockForUpdate(this.store, q.selectProjectForChange(tx, projectId)).executeTakeFirst();
      if (!project) throw notFound(`Project ${projectId}`);
      const environments = await lockForUpdate(this.store, q.selectEnvironmentsOfProjectForChange(tx, projectId)).execute();
      for (const environment of environments) {
        await q.deleteEnvironmentAndData(tx, environment.id);
        announce(tx, { kind: 'environment', environmentId: environment.id });
      }
      await q.deleteProjectRow(tx, projectId);
    });
  }

  async updateSettings(environmentId: string, patch: SettingsPatch): Promise<Environment> {
    const updated = await this.db.transaction().execute(async (tx) => {
      const row = await q.findEnvironment(tx, environmentId);
      if (!row) throw notFound(`Environment ${environmentId}`);
      const current = toEnvironment(row);
      const settings = applySettingsPatch(current.settings, patch);
      await q.updateEnvironmentSettings(tx, current.id, settings, Date.now());
      return { ...current, settings };
    });
    this.changed(environmentId);
    return updated;
  }

  async createSecretKey(environmentId: string): Promise<CreatedSecretKey> {
    const environment = await this.getEnvironment(environmentId);
    const secretKey = newSecret(`sk_${KEY_ENV_TAG[environment.type]}_`);
    const created = { id: newId('sk', environment.id), secretKey, hint: secretKeyHint(secretKey), createdAt: Date.now() };
    await q.insertSecretKey(this.db, environment.id, { ...created, keyHash: sha256Hex(secretKey) });
    return created;
  }

  async listSecretKeys(environmentId: string) {
    const environment = await this.getEnvironment(environmentId);
    return q.listSecretKeys(this.db, environment.id);
  }

  async revokeSecretKey(environmentId: string, keyId: string): Promise<void> {
    const environment = await this.getEnvironment(environmentId);
    if (!(await q.revokeSecretKey(this.db, environment.id, keyId, Date.now()))) {
      throw notFound(`Live secret key ${keyId} of environment ${environmentId}`);
    }
    this.changed(environmentId);
  }
}

function validDomain(raw: string): string {
  const domain = normalizeDomain(raw);
  if (!domain) {
    throw apiError('invalid_request', `"${raw}" is not a domain; give a bare host name such as example.com, with no scheme or path.`, {
      fields: ['domain'],
    });
  }
  return domain;
}

function applySettingsPatch(current: EnvironmentSettings, patch: SettingsPatch): EnvironmentSettings {
  const next: EnvironmentSettings = { ...current, authMethods: { ...current.authMethods, ...patch.authMethods } };
  if (patch.domain !== undefined) next.domain = patch.domain === null ? null : validDomain(patch.domain);
  if (patch.callbackOrigins !== undefined) {
    next.callbackOrigins = [
      ...new Set(
        patch.callbackOrigins.map((raw) => {
          const origin = normalizeOrigin(raw);
          if (!origin) {
            throw apiError(
              'invalid_request',
              `"${raw}" is not an origin; give scheme://host[:port] with no path, such as https://app.example.com.`,
              { fields: ['callbackOrigins'] },
            );
          }
          return origin;
        }),
      ),
    ];
  }
  if (patch.signUp !== undefined) next.signUp = patch.signUp;
  if (patch.tokenAlgorithm !== undefined) next.tokenAlgorithm = patch.tokenAlgorithm;
  if (patch.rateLimitPerMinute !== undefined) next.rateLimitPerMinute = patch.rateLimitPerMinute;
  if (patch.accessTokenTtlSeconds !== undefined) next.accessTokenTtlSeconds = patch.accessTokenTtlSeconds;
  if (patch.sessionLifetimeSeconds !== undefined) next.sessionLifetimeSeconds = patch.sessionLifetimeSeconds;
  if (patch.sessionInactivitySeconds !== undefined) next.sessionInactivitySeconds = patch.sessionInactivitySeconds;
  if (patch.usersCanCreateOrganizations !== undefined) next.usersCanCreateOrganizations = patch.usersCanCreateOrganizations;
  if (patch.emailVerification !== undefined) next.emailVerification = patch.emailVerification;
  if (patch.mfa !== undefined) next.mfa = patch.mfa;
  if (patch.sessionClaims !== undefined) {
    // Checked here, so a bad template is refused when saved and never fails a sign-in.
    if (patch.sessionClaims !== null) compileSessionClaims(patch.sessionClaims);
    next.sessionClaims = patch.sessionClaims === null || Object.keys(patch.sessionClaims).length === 0 ? null : patch.sessionClaims;
  }
  return next;
}
