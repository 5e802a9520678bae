import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PLATFORM_KEY_PREFIX, type Config } from './config.js';
import type { Store } from './db/index.js';
import { constantTimeEqual, newSecret } from './lib/crypto.js';
import { deriveSubkey } from './lib/cursor.js';
import { TenancyService } from './tenancy/service.js';
import type { EnvironmentType } from './tenancy/settings.js';

export interface InstanceSecrets {
  platformKey: string;
  platformKeyGenerated: boolean;
  platformKeyFile: string | undefined;
  instanceSecret: string;
}

/** Reads a secret from the data directory, creating it (mode 0600) the first time. */
function readOrCreate(file: string, generate: () => string): { value: string; created: boolean } {
  try {
    return { value: readFileSync(file, 'utf8').trim(), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const value = generate();
  mkdirSync(path.dirname(file), { recursive: true });
  // 'wx' fails if another process created it first; then read theirs.
  try {
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  } catch {
    return { value: readFileSync(file, 'utf8').trim(), created: false };
  }
}

export function loadInstanceSecrets(config: Config): InstanceSecrets {
  const instanceSecret = config.instanceSecret ?? readOrCreate(path.join(config.dataDir, 'instance-secret'), () => newSecret('', 48)).value;
  if (config.platformKey) {
    return { platformKey: config.platformKey, platformKeyGenerated: false, platformKeyFile: undefined, instanceSecret };
  }
  const file = path.join(config.dataDir, 'platform-key');
  const { value, created } = readOrCreate(file, () => newSecret(PLATFORM_KEY_PREFIX));
  return { platformKey: value, platformKeyGenerated: created, platformKeyFile: file, instanceSecret };
}

/**
 * Records a fingerprint of the instance secret on first start and refuses a different one later:
 * encrypted signing keys and cursors depend on it, and two nodes with different secrets would
 * silently disagree.
 */
export async function checkInstanceSecret(store: Store, instanceSecret: string): Promise<void> {
  const fingerprint = deriveSubkey(instanceSecret, 'fingerprint').toString('base64url');
  await store.db
    .insertInto('instance_meta')
    .values({ key: 'secret_fingerprint', value: fingerprint })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await store.db.selectFrom('instance_meta').select('value').where('key', '=', 'secret_fingerprint').executeTakeFirstOrThrow();
  if (!constantTimeEqual(row.value, fingerprint)) {
    throw new Error(
      'GATEHOUSE_SECRET: does not match the secret this database was initialized with; every node must use the same GATEHOUSE_SECRET.',
    );
  }
}

export interface DefaultProject {
  projectId: string;
  environments: {
    id: string;
    type: EnvironmentType;
    publishableKey: string;
    /** Only development gets one at first start; see ensureDefaultProject. */
    secretKey: string | undefined;
  }[];
}

/**
 * On an empty store, creates "Default project" so a newcomer can sign a user in at once. Its
 * production environment gets no secret key: one printed at every first start would sit in logs
 * unused, so the operator creates it when production is near (the start output says how).
 */
export async function ensureDefaultProject(store: Store): Promise<DefaultProject | null> {
  const tenancy = new TenancyService(store);
  if ((await tenancy.countProjects()) > 0) return null;
  // Several nodes may start on one empty database at once: only the one that claims the marker
  // creates the project.
  const claimed = await store.db
    .insertInto('instance_meta')
    .values({ key: 'default_project', value: String(Date.now()) })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  if (Number(claimed.numInsertedOrUpdatedRows ?? 0n) === 0) return null;
  const { project, environments } = await tenancy.createProjectWithSecretKeys({ name: 'Default project' }, ['development']);
  return {
    projectId: project.id,
    environments: environments.map(({ environment, secretKey }) => ({
      id: environment.id,
      type: environment.type,
      publishableKey: environment.publishableKey,
      secretKey,
    })),
  };
}
