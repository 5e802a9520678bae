import { constantTimeEqual, newSecret, sha256Hex } from '../lib/crypto.js';
import { apiError } from '../lib/errors.js';

/**
 * The bearer secrets of API keys (`gh_ak_…`) and machines (`gh_mch_…`): 32 CSPRNG bytes after the
 * prefix, kept only as their SHA-256. An API key's first characters after the prefix are its lookup
 * part, stored in clear to find the row; they say nothing of the other 30 bytes.
 */
export const API_KEY_PREFIX = 'gh_ak_';
export const MACHINE_SECRET_PREFIX = 'gh_mch_';
const LOOKUP_LENGTH = 12;
const API_KEY_SHAPE = /^gh_ak_[A-Za-z0-9_-]{43}$/;

/** Compared with when nothing was found, so an unknown credential costs the same comparison. */
export const ABSENT_HASH = sha256Hex('gatehouse: no credential has this hash');

export function newApiKeySecret(): { secret: string; lookup: string; hash: string } {
  const secret = newSecret(API_KEY_PREFIX);
  return { secret, lookup: secret.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + LOOKUP_LENGTH), hash: sha256Hex(secret) };
}

/** The lookup part and hash of a presented API key; undefined when it cannot be one. */
export function parseApiKeySecret(secret: string): { lookup: string; hash: string } | undefined {
  if (!API_KEY_SHAPE.test(secret)) return undefined;
  return { lookup: secret.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + LOOKUP_LENGTH), hash: sha256Hex(secret) };
}

export function newMachineSecret(): { secret: string; hash: string } {
  const secret = newSecret(MACHINE_SECRET_PREFIX);
  return { secret, hash: sha256Hex(secret) };
}

export function hashMatches(stored: string, presented: string): boolean {
  return constantTimeEqual(stored, presented);
}

/** `invoices:read`, `org:billing:manage`: 1 to 4 lowercase parts joined by ":", as permission keys are. */
const SCOPE = /^[a-z][a-z0-9_-]{0,62}(?::[a-z][a-z0-9_-]{0,62}){0,3}$/;

/** Deduplicated, validated scopes, in the order given. */
export function validScopes(scopes: readonly string[] | undefined): string[] {
  const given = scopes ?? [];
  const invalid = given.filter((s) => !SCOPE.test(s));
  if (invalid.length > 0) {
    throw apiError(
      'invalid_request',
      `Scopes are 1 to 4 lowercase names joined by ":" (letters, digits, "_" or "-", each starting with a letter), such as invoices:read or org:billing:manage; ${invalid
        .slice(0, 5)
        .map((s) => JSON.stringify(s))
        .join(', ')} ${invalid.length === 1 ? 'is' : 'are'} not.`,
      { fields: ['scopes'] },
    );
  }
  return [...new Set(given)];
}

export function parseScopes(json: string): string[] {
  const value = JSON.parse(json) as unknown;
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : [];
}
