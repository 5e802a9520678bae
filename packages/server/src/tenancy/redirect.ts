import { apiError } from '../lib/errors.js';
import { isOriginAllowed, normalizeOrigin } from './origin.js';
import type { Environment } from './settings.js';

const MAX_LENGTH = 2048;
// scheme://authority, then a path, query or fragment (or nothing).
const SHAPE = /^(https?:\/\/[^/?#]*)([/?#].*)?$/i;

function refuse(raw: string): never {
  throw apiError(
    'invalid_request',
    `redirectUrl ${JSON.stringify(raw.slice(0, 200))} is not allowed. It must be an absolute http(s) URL on an origin this environment accepts: its verified domain or a subdomain over https, a registered callback origin, or localhost in development.`,
    { fields: ['redirectUrl'] },
  );
}

/**
 * Validates a redirect URL for an emailed link against the origin lock. The authority is checked
 * by the same strict origin grammar, so userinfo (`https://ok.test@evil.test`), backslashes,
 * percent-encoding and scheme-relative forms never reach a browser's more forgiving parser.
 */
export function validateRedirectUrl(environment: Environment, raw: string): URL {
  if (raw.length > MAX_LENGTH || /[\s\\\u0000-\u001f\u007f]/.test(raw)) refuse(raw);
  const match = SHAPE.exec(raw);
  if (!match) refuse(raw);
  const origin = normalizeOrigin(match[1]!);
  if (!origin || !isOriginAllowed(environment, origin)) refuse(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse(raw);
  }
  // Defence in depth: the WHATWG parser must agree on where the link goes.
  if (url.origin !== origin) refuse(raw);
  return url;
}

/** The emailed link: the redirect URL with a `token` query parameter added. */
export function linkWithToken(redirectUrl: URL, token: string): string {
  const url = new URL(redirectUrl.href);
  url.searchParams.set('token', token);
  return url.href;
}
