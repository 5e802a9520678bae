/** Which connections are social, and whose email verification Gatehouse believes (DESIGN "Linking by email"). */
import type { Connection } from '../connections.js';
import { EMAIL_VERIFYING_PRESETS } from '../oidc/presets.js';

/** An OIDC or OAuth 2.0 connection with no domains: started by its id only (a sign-in button). */
export function isSocial(connection: Connection): boolean {
  return connection.type !== 'saml' && connection.domains.length === 0;
}

/** Whether the provider's email_verified (or its equivalent) is believed. */
export function vouchesForEmail(connection: Connection): boolean {
  if (connection.type === 'saml') return false;
  // A self-managed GitLab (sso/service.ts) stores the operator's answer; gitlab.com's preset needs none.
  if (connection.type === 'oidc' && connection.config.preset === 'gitlab' && connection.config.trustEmailVerified !== undefined) {
    return connection.config.trustEmailVerified === true;
  }
  if (connection.type === 'oidc' && connection.config.preset) return EMAIL_VERIFYING_PRESETS.includes(connection.config.preset);
  // OAuth 2.0 without an emailVerified field has no flag to believe.
  if (connection.type === 'oauth2' && !connection.config.userinfoFields.emailVerified) return false;
  return connection.config.trustEmailVerified === true;
}

