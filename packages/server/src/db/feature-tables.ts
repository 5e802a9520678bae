import type { EnvironmentId } from '../lib/ids.js';
import type { Generated } from 'kysely';

/** The tables of organizations, invitations and domains, webhooks, SSO, second factors, API keys and machines (see schema.ts). */

export interface OrganizationsTable {
  environment_id: EnvironmentId;
  id: string;
  name: string;
  slug: string;
  image_url: string | null;
  /** 1 when members must have verified a second factor to act as it (0030). */
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

/** API keys (0031): exactly one of user_id and organization_id is set. */
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

/** Machines (0032): OAuth 2.0 clients of the client-credentials grant. */
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

/** Actor tokens (0034): one-time tokens that start an impersonated session (docs/impersonation.md). */
export interface ActorTokensTable {
  environment_id: EnvironmentId;
  id: string;
  user_id: string;
  /** Who acts: the `act.sub` of the sessions it starts. */
  actor_sub: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}
