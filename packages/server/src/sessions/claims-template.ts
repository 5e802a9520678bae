import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { SessionClaimsCompiler } from '../tenancy/claims-template.js';
import type { Environment } from '../tenancy/settings.js';
import { findClaimsUser } from './queries.js';

// The template is an environment setting, checked when saved (tenancy/claims-template.ts).
export { compileSessionClaims, SessionClaimsCompiler, type ClaimsUser, type CompiledClaims } from '../tenancy/claims-template.js';

/** Renders an environment's template for a user at every token issue. */
export class CustomClaims {
  private readonly compiler = new SessionClaimsCompiler();

  /**
   * Nothing to do without a template, and no read when it names no user field; the template was
   * checked when saved. Undefined when there are none, or when the rendering is over the cap.
   */
  async render(db: Kysely<Database>, environment: Environment, userId: string): Promise<Record<string, unknown> | undefined> {
    const template = environment.settings.sessionClaims;
    if (!template) return undefined;
    const compiled = this.compiler.get(template);
    if (!compiled.readsUser) return compiled.render(undefined);
    const row = await findClaimsUser(db, environment.id, userId);
    return compiled.render(
      row && {
        id: row.id,
        email: row.email,
        emailVerified: row.email_verified === 1,
        firstName: row.first_name,
        lastName: row.last_name,
        username: row.username,
        imageUrl: row.image_url,
        publicMetadata: JSON.parse(row.public_metadata) as Record<string, unknown>,
        createdAt: row.created_at,
      },
    );
  }
}
