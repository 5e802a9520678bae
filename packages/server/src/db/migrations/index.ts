import type { Migration } from 'kysely';
import { tenancy } from './0001_tenancy.js';
import { assets } from './0003_assets.js';

/**
 * The one set of migrations for both dialects, one file each. Append only: a migration that has
 * shipped is never edited. Names sort in order of application.
 */
export const migrations: Record<string, Migration> = {
  '0001_tenancy': tenancy,
  '0003_assets': assets,
};
