/**
 * What checking an access token's session reads (the session, its environment and its user), how
 * it is cached between requests, and whether it is still live.
 */
import type { EnvironmentId } from '../lib/ids.js';
import { RowCache, type RowCacheOptions } from '../db/row-cache.js';
import type { UsersTable } from '../db/schema.js';
import { freezeEnvironment } from '../tenancy/cache.js';
import { toEnvironment, type Environment } from '../tenancy/settings.js';
import type { findSessionWithEnvironment } from './queries.js';

export interface SessionTimes {
  created_at: number;
  last_active_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export type Liveness = 'live' | 'revoked' | 'expired';

export interface SessionRecord {
  environment: Environment;
  times: SessionTimes;
  activeOrganizationId: string | null;
  user: Readonly<UsersTable>;
}

export type SessionCache = RowCache<SessionRecord>;

/**
 * Sessions read by `/v1/me*` requests, dropped when the session, its user or its environment
 * changes (on this node at commit, on others through Redis).
 */
export function newSessionCache(options?: RowCacheOptions): SessionCache {
  return new RowCache<SessionRecord>('sessionId', new Set(['environment', 'session', 'user']), options);
}

/**
 * Resolves whether this node has applied every change of the environment announced before the
 * call (lib/redis.ts, `caughtUp`), so its cached rows may serve a request that began after a
 * revoking response. `request` lets the check ride on the rate limiter's round trip.
 */
export type CacheFreshness = (environment: Environment, request: object | undefined) => Promise<boolean>;

export function sessionLiveness(environment: Environment, session: SessionTimes, now: number): Liveness {
  if (session.revoked_at !== null) return 'revoked';
  if (now >= session.expires_at) return 'expired';
  if (now >= session.last_active_at + environment.settings.sessionInactivitySeconds * 1000) return 'expired';
  return 'live';
}

type SessionWithEnvironmentRow = NonNullable<Awaited<ReturnType<typeof findSessionWithEnvironment>>>;

/** The joined row as a record, frozen: cached copies are shared by every request that reads them. */
export function sessionRecordOf(environmentId: EnvironmentId, row: SessionWithEnvironmentRow): SessionRecord {
  return Object.freeze({
    environment: freezeEnvironment(toEnvironment(row)),
    times: Object.freeze({
      created_at: row.session_created_at,
      last_active_at: row.session_last_active_at,
      expires_at: row.session_expires_at,
      revoked_at: row.session_revoked_at,
    }),
    activeOrganizationId: row.session_active_organization_id,
    user: Object.freeze({
      environment_id: environmentId,
      id: row.session_user_id,
      email: row.user_email,
      username: row.user_username,
      first_name: row.user_first_name,
      last_name: row.user_last_name,
      image_url: row.user_image_url,
      password_hash: row.user_password_hash,
      email_verified: row.user_email_verified,
      banned: row.user_banned,
      public_metadata: row.user_public_metadata,
      private_metadata: row.user_private_metadata,
      unsafe_metadata: row.user_unsafe_metadata,
      external_id: row.user_external_id,
      last_sign_in_at: row.user_last_sign_in_at,
      two_factor_enabled: row.user_two_factor_enabled,
      created_at: row.user_created_at,
      updated_at: row.user_updated_at,
    }),
  });
}
