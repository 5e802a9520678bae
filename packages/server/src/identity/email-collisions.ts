import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { findEmailCollisions } from './queries.js';

const SHOWN = 20;

/**
 * The start-up warning about users whose addresses differ only by case (found by migration 0007,
 * never merged): one line per group with the environment and user ids, no addresses (logs are not the
 * place for them). Empty when there are none, so it disappears once an operator resolves the last one.
 */
export async function emailCollisionWarning(db: Kysely<Database>): Promise<string[]> {
  const groups = await findEmailCollisions(db);
  if (groups.length === 0) return [];
  const lines = [
    '',
    `Warning: ${groups.length} group(s) of users have email addresses that differ only by case (created before`,
    'addresses matched whatever their case). Nothing was merged: each signs in with the address exactly as',
    'stored; any other spelling reaches the first listed. Give one user of each group another address',
    '(PATCH /v1/users/{id}) or delete it. See docs/identity.md, "Emails".',
    ...groups.slice(0, SHOWN).map((g) => `  ${g.environmentId}: ${g.userIds.join(', ')}`),
  ];
  if (groups.length > SHOWN) lines.push(`  … and ${groups.length - SHOWN} more (the SQL to list them all is in docs/identity.md)`);
  return lines;
}
