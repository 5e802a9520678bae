/**
 * Table types for Kysely. Timestamps are integer milliseconds since the epoch and booleans are
 * 0/1 integers on both dialects, so one set of queries and migrations serves SQLite and PostgreSQL.
 * Every tenant table leads with `environment_id`.
 */
import type { EnvironmentId } from '../lib/ids.js';
import type { Generated } from 'kysely';

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
  actor_kind: 'platform_key' | 'operator' | 'setup';
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
  /** 1 while the user has a second factor (TOTP; later a passkey), kept by mfa/ (0025). */
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
  /** JSON array of the factors this session verified (`pwd`, `email`, `sso`, `totp`…), in order (0025). */
  amr: string;
  /** When the session last verified a first factor / a second factor; null when never. */
  first_factor_at: number | null;
  second_factor_at: number | null;
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

export interface OrganizationsTable {
  environment_id: EnvironmentId;
  id: string;
  name: string;
  slug: string;
  image_url: string | null;
  /** 1 when members must have verified a second factor to act as it (0025). */
  mfa_required: number;
  created_at: number;
  updated_at: number;
}

export interface OrganizationMembersTable {
  environment_id: EnvironmentId;
  organization_id: string;
  user_id: string;
  /** A system role or the key of a custom role of the environment. */
  role: string;
  created_at: number;
  updated_at: number;
}

export interface OrganizationRolesTable {
  environment_id: EnvironmentId;
  key: string;
  name: string;
  description: string | null;
  /** JSON array of permission keys. */
  permissions: string;
  created_at: number;
  updated_at: number;
}

export interface WebhookEndpointsTable {
  environment_id: EnvironmentId;
  id: string;
  url: string;
  /** JSON array of event types; null: every event. */
  event_types: string | null;
  description: string | null;
  enabled: number;
  disabled_reason: string | null;
  /** Sealed (webhooks/secrets.ts). */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookEventsTable {
  environment_id: EnvironmentId;
  /** msg_…: the webhook-id of every delivery of this event. */
  id: string;
  type: string;
  body: string;
  fanned_out: Generated<number>;
  created_at: number;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  environment_id: EnvironmentId;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: WebhookDeliveryStatus;
  response_status: number | null;
  error: string | null;
  next_attempt_at: number | null;
  locked_until: number | null;
  created_at: number;
}

export type InvitationRowStatus = 'pending' | 'accepted' | 'revoked';

export interface OrganizationInvitationsTable {
  environment_id: EnvironmentId;
  id: string;
  organization_id: string;
  /** As typed (normalized), for display and delivery; email_key finds it. */
  email: string;
  email_key: string;
  role: string;
  /** "expired" is a pending invitation past expires_at, computed when read. */
  status: InvitationRowStatus;
  /** sha256 of the emailed token. */
  token_hash: string;
  redirect_url: string;
  inviter_user_id: string | null;
  accepted_user_id: string | null;
  expires_at: number;
  /** When its email last went out (created or refreshed). */
  sent_at: number;
  created_at: number;
  updated_at: number;
}

export interface SsoConnectionsTable {
  environment_id: EnvironmentId;
  id: string;
  type: 'oidc' | 'oauth2' | 'saml';
  name: string;
  domains: string;
  config: string;
  client_secret: string | null;
  created_at: number;
  updated_at: number;
}

export interface SsoIdentitiesTable {
  environment_id: EnvironmentId;
  /** idn_…; null only for rows written before 0028 and not yet backfilled (never after it). */
  id: string;
  connection_id: string;
  subject: string;
  user_id: string;
  email: string | null;
  /** 1 when the email was trusted (verified by a provider that Gatehouse or the operator trusts) at link time. */
  email_trusted: Generated<number>;
  created_at: number;
  last_sign_in_at: number;
}

export interface SsoAttemptsTable {
  environment_id: EnvironmentId;
  id: string;
  connection_id: string;
  state_hash: string;
  nonce: string | null;
  code_verifier: string | null;
  saml_request_id: string | null;
  redirect_url: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  user_id: string | null;
  token_hash: string | null;
  token_expires_at: number | null;
  token_consumed_at: number | null;
  /** POST /v1/me/identities: the signed-in user this start links a provider to. */
  link_user_id: string | null;
  /** The provider's answer to a link, held until its user completes it (POST /v1/me/identities/complete). */
  link_subject: string | null;
  link_email: string | null;
  link_email_trusted: number | null;
}

export interface SsoSeenAssertionsTable {
  environment_id: EnvironmentId;
  connection_id: string;
  assertion_id: string;
  expires_at: number;
}

export type EnrollmentMode = 'manual_invitation' | 'automatic_invitation' | 'automatic_suggestion';

export interface OrganizationDomainsTable {
  environment_id: EnvironmentId;
  id: string;
  organization_id: string;
  name: string;
  enrollment_mode: EnrollmentMode;
  verified: number;
  verification_email: string | null;
  /** HMAC of the emailed code, bound to the domain id. */
  verification_hash: string | null;
  verification_attempts: number;
  verification_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export type MembershipRequestStatus = 'suggested' | 'pending' | 'accepted' | 'rejected';

export interface OrganizationMembershipRequestsTable {
  environment_id: EnvironmentId;
  id: string;
  organization_id: string;
  user_id: string;
  domain_id: string | null;
  status: MembershipRequestStatus;
  created_at: number;
  updated_at: number;
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

/** A user's TOTP (mfa/): secrets sealed with the instance secret. */
export interface UserTotpTable {
  environment_id: EnvironmentId;
  user_id: string;
  /** The confirmed secret, sealed; null while only a pending one exists. */
  secret: string | null;
  /** A secret waiting for its first code (POST /v1/me/mfa/totp), sealed. */
  pending_secret: string | null;
  enabled_at: number | null;
  created_at: number;
  /** The last accepted RFC 6238 time step; a code must be for a later one. */
  last_step: number | null;
}

/** Backup codes: a keyed hash of each, spent once. */
export interface UserBackupCodesTable {
  environment_id: EnvironmentId;
  id: string;
  user_id: string;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

/** API keys (0026): exactly one of user_id and organization_id is set. */
export interface ApiKeysTable {
  environment_id: EnvironmentId;
  id: string;
  user_id: string | null;
  organization_id: string | null;
  name: string;
  /** Characters of the secret after its prefix, to find the row; the secret itself is only hashed. */
  lookup: string;
  secret_hash: string;
  /** JSON array of scope names. */
  scopes: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

/** Machines (0027): OAuth 2.0 clients of the client-credentials grant. */
export interface MachinesTable {
  environment_id: EnvironmentId;
  id: string;
  name: string;
  /** JSON array of scope names. */
  scopes: string;
  secret_hash: string;
  created_at: number;
  secret_rotated_at: number;
}

export interface Database {
  user_totp: UserTotpTable;
  user_backup_codes: UserBackupCodesTable;
  api_keys: ApiKeysTable;
  machines: MachinesTable;
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
