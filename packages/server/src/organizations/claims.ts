import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../lib/errors.js';
import type { EnvironmentId } from '../lib/ids.js';
import type { ClaimsContext } from '../sessions/access-token-issuer.js';
import type { Environment } from '../tenancy/settings.js';
import type { Tx } from './access.js';
import * as q from './queries.js';
import * as roles from './role-queries.js';
import { isSystemRole, parsePermissions, SYSTEM_ROLES } from './roles.js';
import { organizationView, type UserOrganizationView } from './views.js';

/**
 * What other domains ask of organizations before the organization service exists (the composition
 * root builds sessions and identity first): the org_* claims of an access token, and the last-owner
 * rule of a user's deletion.
 */

type Db = Kysely<Database> | Transaction<Database>;

/** The user's organizations with the live permissions of their roles. */
export async function withPermissions(db: Db, environmentId: EnvironmentId, rows: q.UserOrganizationRow[]): Promise<UserOrganizationView[]> {
  const custom = rows.some((r) => !isSystemRole(r.role))
    ? new Map((await roles.listRoles(db, environmentId)).map((r) => [r.key, parsePermissions(r.permissions)]))
    : new Map<string, string[]>();
  return rows.map((row) => ({
    ...organizationView(row),
    role: row.role,
    permissions: isSystemRole(row.role) ? [...SYSTEM_ROLES[row.role].permissions] : (custom.get(row.role) ?? []),
  }));
}

/**
 * The org_* claims of a new access token (a snapshot for UIs; Gatehouse authorizes nothing with
 * them): none without an active organization, undefined when its membership has gone (the token's
 * issuer then clears the session's active organization).
 */
export function organizationClaims(store: Store) {
  return async (context: ClaimsContext): Promise<Record<string, unknown> | undefined> => {
    const organizationId = context.activeOrganizationId;
    if (organizationId === null) return {};
    const row = await q.findUserOrganization(store.db, context.environment.id, context.userId, organizationId);
    if (!row) return undefined;
    // An organization that requires MFA lends its claims only to a session that verified a second
    // factor (applications authorize with them); the session keeps acting as it, to verify one later.
    if (row.mfa_required === 1 && context.environment.settings.mfa !== 'off' && !context.secondFactorVerified) return {};
    const [view] = await withPermissions(store.db, context.environment.id, [row]);
    return { org_id: view!.id, org_slug: view!.slug, org_role: view!.role, org_permissions: view!.permissions };
  };
}

/**
 * The UserDeletionGuard, run inside identity's delete transaction with the user row locked: a user
 * who is the last owner of an organization cannot be deleted. It locks every organization the user
 * belongs to (in id order, so two deletions cannot deadlock) before counting owners, as membership
 * changes do, so a co-owner leaving at the same moment is ordered before or after it, never beside.
 */
export async function assertUserDeletable(store: Store, tx: Tx, environment: Environment, userId: string): Promise<void> {
  // Every membership, not only owned ones: one could be promoted to owner while we decide.
  await q.lockOrganizationsOfMember(store, tx, environment.id, userId);
  const owned = await q.organizationsSolelyOwnedBy(tx, environment.id, userId);
  if (owned.length === 0) return;
  const names = owned.map((o) => `${JSON.stringify(o.name)} (${o.id})`).join(', ');
  throw apiError(
    'forbidden',
    `User ${userId} is the last owner of ${owned.length === 1 ? 'organization' : 'organizations'} ${names}, so they cannot be deleted: transfer ownership first (make another member an owner) or delete ${owned.length === 1 ? 'that organization' : 'those organizations'}, then delete the user.`,
    { organizations: owned.map((o) => ({ id: o.id, name: o.name })) },
  );
}
