import type { Migration } from 'kysely';
import { tenancy } from './0001_tenancy.js';
import { identity } from './0002_identity.js';
import { assets } from './0003_assets.js';
import { flows } from './0004_flows.js';
import { organizations } from './0005_organizations.js';
import { flowTokens } from './0006_flow_tokens.js';
import { emailKeys } from './0007_email_keys.js';
import { signingKeyActivation } from './0008_signing_key_activation.js';
import { webhooks } from './0009_webhooks.js';
import { userSearch } from './0010_user_search.js';
import { emailVerified } from './0011_email_verified.js';
import { invitations } from './0012_invitations.js';
import { eventOutboxWithoutRowid } from './0013_event_outbox_without_rowid.js';
import { userBans } from './0014_user_bans.js';
import { userMetadata } from './0015_user_metadata.js';
import { signUpAttempts } from './0016_sign_up_attempts.js';
import { handoff } from './0017_handoff.js';
import { sso } from './0018_sso.js';
import { operators } from './0019_operators.js';
import { userExternalId } from './0020_user_external_id.js';
import { lastSignIn } from './0021_last_sign_in.js';
import { userEmailOrder } from './0022_user_email_order.js';
import { handoffSession } from './0023_handoff_session.js';
import { signingKeyRevocation } from './0024_signing_key_revocation.js';
import { socialIdentities } from './0028_social_identities.js';
import { identityLinkCompletion } from './0029_identity_link_completion.js';
import { mfa } from './0030_mfa.js';
import { apiKeys } from './0031_api_keys.js';
import { machines } from './0032_machines.js';
import { secondFactorAttempts } from './0033_second_factor_attempts.js';
import { actorTokens } from './0034_actor_tokens.js';
import { passkeys } from './0035_passkeys.js';

/**
 * The one set of migrations for both dialects, one file each. Append only: a migration that has
 * shipped is never edited. Names sort in order of application.
 */
export const migrations: Record<string, Migration> = {
  '0001_tenancy': tenancy,
  '0002_identity': identity,
  '0003_assets': assets,
  '0004_flows': flows,
  '0005_organizations': organizations,
  '0006_flow_tokens': flowTokens,
  '0007_email_keys': emailKeys,
  '0008_signing_key_activation': signingKeyActivation,
  '0009_webhooks': webhooks,
  '0010_user_search': userSearch,
  '0011_email_verified': emailVerified,
  '0012_invitations': invitations,
  '0013_event_outbox_without_rowid': eventOutboxWithoutRowid,
  '0014_user_bans': userBans,
  '0015_user_metadata': userMetadata,
  '0016_sign_up_attempts': signUpAttempts,
  '0017_handoff': handoff,
  '0018_sso': sso,
  '0019_operators': operators,
  '0020_user_external_id': userExternalId,
  '0021_last_sign_in': lastSignIn,
  '0022_user_email_order': userEmailOrder,
  '0023_handoff_session': handoffSession,
  '0024_signing_key_revocation': signingKeyRevocation,
  '0028_social_identities': socialIdentities,
  '0029_identity_link_completion': identityLinkCompletion,
  '0030_mfa': mfa,
  '0031_api_keys': apiKeys,
  '0032_machines': machines,
  '0033_second_factor_attempts': secondFactorAttempts,
  '0034_actor_tokens': actorTokens,
  '0035_passkeys': passkeys,
};
