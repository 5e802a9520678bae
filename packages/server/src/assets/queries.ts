import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The project a logo is stored for; undefined when there is none. */
export async function findProjectId(db: Kysely<Database>, projectId: string): Promise<string | undefined> {
  return (await db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst())?.id;
}

/** Sets (or, with null, clears) a project's logo URL; false when the project does not exist. */
export async function setProjectLogoUrl(db: Kysely<Database>, projectId: string, logoUrl: string | null): Promise<boolean> {
  const result = await db.updateTable('projects').set({ logo_url: logoUrl }).where('id', '=', projectId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
