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

export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * OIDC and OAuth 2.0: a connection with domains vouches for the addresses at them that its IdP
 * verifies; a social one (no domains) for every address its provider verifies, when that provider
 * is one known to verify or its operator set trustEmailVerified.
 */
export function vouchedFor(connection: Connection, email: string | null): boolean {
  if (connection.domains.length === 0) return vouchesForEmail(connection);
  return email !== null && connection.domains.includes(emailDomain(email));
}
