import type { SessionsTable } from '../db/schema.js';

// What session.* webhook events carry (db/events.ts records them).

/** A session as the platform shows it: never its tokens or their hashes. */
export function sessionData(row: Readonly<SessionsTable>) {
  return {
    id: row.id,
    userId: row.user_id,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    userAgent: row.user_agent,
    activeOrganizationId: row.active_organization_id,
    // An impersonated session names who acts (docs/impersonation.md).
    ...(row.actor ? { actor: { sub: row.actor } } : {}),
  };
}
