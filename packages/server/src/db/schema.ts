/**
 * Table types for Kysely. Timestamps are integer milliseconds since the epoch and booleans are
 * 0/1 integers on both dialects, so one set of queries and migrations serves SQLite and PostgreSQL.
 * Every tenant table leads with `environment_id`.
 */
import type { Generated } from 'kysely';

export interface InstanceMetaTable {
  key: string;
  value: string;
}

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: number;
  /** The project logo (branding), a public URL of the object store. */
  logo_url: string | null;
}

export interface EnvironmentsTable {
  id: string;
  project_id: string;
  type: 'development' | 'production';
  publishable_key: string;
  publishable_key_hash: string;
  /** JSON of EnvironmentSettings; absent keys take their defaults. */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface SecretKeysTable {
  environment_id: string;
  id: string;
  key_hash: string;
  /** The last characters of the key, so an operator can tell keys apart. */
  hint: string;
  created_at: number;
  revoked_at: number | null;
}

export interface Database {
  instance_meta: InstanceMetaTable;
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  secret_keys: SecretKeysTable;
}

export type Counter = Generated<number>;
