import { apiError } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';

/**
 * The RP ID and the origins a passkey may be used on (DESIGN "Passkey origins and RP ID"): the
 * environment's domain (`https://{domain}` and its subdomains); in development also
 * `http://localhost:<port>` with RP ID `localhost`. Decided from the request's Origin header and
 * the environment, never from a body.
 */
export function rpIdFor(environment: Environment, requestOrigin: string | undefined): string {
  if (environment.type === 'development' && isLocalhostOrigin(requestOrigin)) return 'localhost';
  const domain = environment.settings.domain;
  if (!domain) {
    throw apiError(
      'invalid_request',
      environment.type === 'development'
        ? 'Passkeys need a page on http://localhost:<port> in development, or a domain set on the environment.'
        : 'Passkeys need the environment\'s domain: set "domain" on the production environment (its RP ID).',
    );
  }
  return domain.toLowerCase();
}

function isLocalhostOrigin(origin: string | undefined): boolean {
  const url = parse(origin);
  return url !== undefined && url.protocol === 'http:' && url.hostname === 'localhost' && url.pathname === '/';
}

function parse(origin: string | undefined): URL | undefined {
  if (!origin) return undefined;
  try {
    return new URL(origin);
  } catch {
    return undefined;
  }
}

/** Whether a ceremony's `clientDataJSON.origin` is one this RP ID accepts. */
export function originAccepted(environment: Environment, rpId: string, origin: string): boolean {
  const url = parse(origin);
  // An origin has no path, credentials, query or fragment; anything else is not a browser's.
  if (!url || url.origin !== origin) return false;
  if (rpId === 'localhost') return environment.type === 'development' && url.protocol === 'http:' && url.hostname === 'localhost';
  const domain = environment.settings.domain?.toLowerCase();
  if (!domain || rpId !== domain) return false;
  return url.protocol === 'https:' && (url.hostname === domain || url.hostname.endsWith(`.${domain}`));
}
