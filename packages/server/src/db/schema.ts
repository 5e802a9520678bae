/**
 * Table types for Kysely. Timestamps are integer milliseconds since the epoch and booleans are
 * 0/1 integers on both dialects, so one set of queries and migrations serves SQLite and PostgreSQL.
 * Every tenant table leads with `environment_id`.
 */
import type { EnvironmentId } from '../lib/ids.js';
import type { Generated } from 'kysely';
import type {
  OrganizationsTable,
  OrganizationMembersTable,
  OrganizationRolesTable,
  WebhookEndpointsTable,
  WebhookEventsTable,
  WebhookDeliveriesTable,
  OrganizationInvitationsTable,
  SsoConnectionsTable,
  SsoIdentitiesTable,
  SsoAttemptsTable,
  SsoSeenAssertionsTable,
  OrganizationDomainsTable,
  OrganizationMembershipRequestsTable,
  UserTotpTable,
  UserBackupCodesTable,
  ApiKeysTable,
  MachinesTable,
  ActorTokensTable,
} from './feature-tables.js';

export * from './feature-tables.js';
export * from './passkey-tables.js';
import type { PasskeysTable, PasskeyUserHandlesTable, PasskeyChallengesTable } from './passkey-tables.js';

export interface InstanceMetaTable {
  key: string;
  value: string;
}

export interface OperatorTokensTable {
  id: string;
  token_hash: string;
  /** Null for the first-operator setup link; the invited address otherwise. */
  email: string | null;
  invited_by: string | null;
  created_at: number;
  expires_at: number | null;
  used_at: number | null;
}

export interface OperatorAuditLogTable {
  id: string;
  at: number;
  /** `secret_key` and `actor` record impersonation (docs/impersonation.md): who minted an actor token, who redeemed it. */
  actor_kind: 'platform_key' | 'operator' | 'setup' | 'secret_key' | 'actor';
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target: string | null;
  status: number;
}

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: number;
  /** The project logo (branding), a public URL of the object store. */
  logo_url: string | null;
}

export interface EnvironmentsTable {
  id: EnvironmentId;
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
  environment_id: EnvironmentId;
  id: string;
  key_hash: string;
  /** The last characters of the key, so an operator can tell keys apart. */
  hint: string;
  created_at: number;
  revoked_at: number | null;
}

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'captured' | 'suppressed';

export interface EmailOutboxTable {
  environment_id: EnvironmentId;
  id: string;
  kind: string;
  /** The address as given (shown, and where mail goes). */
  to_address: string;
  /** Its comparison key (identity/email.ts emailKey): the throttle and the `to` filter use it. */
  to_key: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: OutboxStatus;
  attempts: Generated<number>;
  next_attempt_at: number;
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** A user as the service reads and caches it. */
export interface UsersTable {
  environment_id: EnvironmentId;
  id: string;
  /** As typed, for display and delivery: trimmed, domain lowercased, local part as given. */
  email: string;
  username: string | null;
  first_name: string | null;
  last_name: string | null;
  image_url: string | null;
  /** argon2id PHC string; null for a user created without a password. */
  password_hash: string | null;
  /** 1 once the user proved they receive mail at `email` (or an operator vouched); a new address resets it. */
  email_verified: number;
  /** 1 while the user is banned: every sign-in is refused with 403 user_banned. */
  banned: number;
  /** JSON objects (identity/metadata.ts): public and unsafe ones the user reads, private ones only the backend. */
  public_metadata: string;
  private_metadata: string;
  unsafe_metadata: string;
  /** The user's id in the system they were imported from (or the application's); unique per environment. */
  external_id: string | null;
  /** When the user last started a session, by any method; null until the first. */
  last_sign_in_at: number | null;
  /** 1 while the user has a second factor (TOTP; later a passkey), kept by mfa/ (0030). */
  two_factor_enabled: number;
  created_at: number;
  updated_at: number;
}

/** How users are found by email; look-up machinery, never shown. */
export interface UserEmailKeyColumns {
  /** emailKey(email): unique per environment among rows with email_collision = 0. */
  email_key: string;
  /**
   * 1 for a user whose address differed only by case from an older user's of the same environment
   * when keys were introduced (migration 0007); such rows are left out of the key's uniqueness.
   */
  email_collision: number;
}

/**
 * What user search reads (identity/search.ts); look-up machinery, never shown. On SQLite users also
 * have `search_key`, the stable number the FTS5 index refers to them by (migration 0010), which only
 * that migration's triggers and the search query use.
 */
export interface UserSearchColumns {
  search_text: string;
}

export interface SessionsTable {
  environment_id: EnvironmentId;
  id: string;
  user_id: string;
  refresh_hash: string;
  previous_hash: string | null;
  generation: number;
  rotated_at: number | null;
  created_at: number;
  last_active_at: number;
  expires_at: number;
  revoked_at: number | null;
  active_organization_id: string | null;
  user_agent: string | null;
  /** JSON array of the factors this session verified (`pwd`, `email`, `sso`, `totp`…), in order (0030). */
  amr: string;
  /** When the session last verified a first factor / a second factor; null when never. */
  first_factor_at: number | null;
  second_factor_at: number | null;
  /** Who acts in an impersonated session (its tokens' `act.sub`); null otherwise (0034). */
  actor: string | null;
}

export interface SigningKeysTable {
  environment_id: EnvironmentId;
  id: string;
  algorithm: string;
  public_jwk: string;
  private_key: string;
  created_at: number;
  /** From when the key signs; set on every row (0008 filled older rows with created_at). */
  activates_at: number;
  /** When the key stops signing: null while no successor is scheduled; may lie in the future. */
  retired_at: number | null;
  publish_until: number | null;
  /** When an operator revoked it (0024): unpublished at once, its tokens refused, never signing again. */
  revoked_at: number | null;
}

export interface MonthlyActiveUsersTable {
  environment_id: EnvironmentId;
  month: string;
  user_id: string;
  first_seen_at: number;
}

export type FlowPurpose = 'magic_link' | 'email_code' | 'password_reset';

/** Hosted pages' one-time handoff tokens (hosted/). */
export interface HandoffTokensTable {
  environment_id: EnvironmentId;
  id: string;
  user_id: string;
  /** The session that minted it; the exchange requires it live. Null only for tokens minted before 0023. */
  session_id: string | null;
  token_hash: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface FlowTokensTable {
  environment_id: EnvironmentId;
  id: string;
  purpose: FlowPurpose;
  /** As typed; an account created by the flow gets this address. */
  email: string;
  /** emailKey(email): codes are found by it. */
  email_key: string;
  user_id: string | null;
  secret_hash: string;
  attempts: Generated<number>;
  password_fingerprint: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface SignUpAttemptsTable {
  environment_id: EnvironmentId;
  id: string;
  email: string;
  /** argon2id, computed at the start so both answers of the start cost the same. */
  password_hash: string;
  first_name: string | null;
  last_name: string | null;
  username: string | null;
  code_hash: string;
  attempts: Generated<number>;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/** Second-factor attempts (auth/second-factor.ts): a first factor proven, no session yet. */
export interface SignInAttemptsTable {
  environment_id: EnvironmentId;
  id: string;
  user_id: string;
  kind: 'second_factor' | 'setup';
  /** JSON array of the first factors' amr names. */
  first_factors: string;
  created_at: number;
  expires_at: number;
  wrong_tries: Generated<number>;
  spent_at: number | null;
}

export interface Database {
  passkeys: PasskeysTable;
  passkey_user_handles: PasskeyUserHandlesTable;
  passkey_challenges: PasskeyChallengesTable;
  sign_in_attempts: SignInAttemptsTable;
  user_totp: UserTotpTable;
  user_backup_codes: UserBackupCodesTable;
  api_keys: ApiKeysTable;
  machines: MachinesTable;
  actor_tokens: ActorTokensTable;
  sso_connections: SsoConnectionsTable;
  sso_identities: SsoIdentitiesTable;
  sso_attempts: SsoAttemptsTable;
  sso_seen_assertions: SsoSeenAssertionsTable;
  sign_up_attempts: SignUpAttemptsTable;
  organization_invitations: OrganizationInvitationsTable;
  organization_domains: OrganizationDomainsTable;
  organization_membership_requests: OrganizationMembershipRequestsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  flow_tokens: FlowTokensTable;
  handoff_tokens: HandoffTokensTable;
  email_outbox: EmailOutboxTable;
  instance_meta: InstanceMetaTable;
  operator_tokens: OperatorTokensTable;
  operator_audit_log: OperatorAuditLogTable;
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  secret_keys: SecretKeysTable;
  users: UsersTable & UserEmailKeyColumns & UserSearchColumns;
  sessions: SessionsTable;
  signing_keys: SigningKeysTable;
  monthly_active_users: MonthlyActiveUsersTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  organization_roles: OrganizationRolesTable;
}
