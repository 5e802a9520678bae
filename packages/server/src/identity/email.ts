import { apiError } from '../lib/errors.js';
import { EMAIL_MAX_LENGTH } from '@gatehouse/contract';

/**
 * Email addresses are accepted as a single bare addr-spec: `local@domain`. The address is trimmed and
 * its domain lowercased; the local part is kept exactly as given (RFC 5321 leaves its case to the
 * receiving server). Address lists, display names (`Name <a@b>`), quoted local parts, comments,
 * whitespace and control characters are refused, because each is a way to smuggle a second address
 * past a check that looks at only part of the string.
 */

// RFC 5322 atext, plus any non-ASCII letter or digit (RFC 6531).
const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\p{L}\p{N}-]+$/u;
// Punycode labels (xn--…) are ordinary LDH labels, so one pattern covers them.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const FORBIDDEN = /[\s\p{Cc}\p{Cf}<>()[\]\\,;:"]/u;

export { EMAIL_MAX_LENGTH };

/** The normalized address, or a reason it is not one. */
export function parseEmail(raw: string): { email: string } | { problem: string } {
  const value = raw.trim();
  if (value === '') return { problem: 'is empty' };
  if (value.length > EMAIL_MAX_LENGTH) return { problem: `is longer than ${EMAIL_MAX_LENGTH} characters` };
  if (FORBIDDEN.test(value)) {
    return {
      problem:
        'must be a single bare address such as ada@example.com, without a display name, list, quotes, comments, spaces or control characters',
    };
  }
  const at = value.lastIndexOf('@');
  if (at <= 0 || value.indexOf('@') !== at) return { problem: 'must contain exactly one "@" with a local part before it' };
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  if (local.length > 64) return { problem: 'has a local part (before "@") longer than 64 characters' };
  if (!local.split('.').every((atom) => ATOM.test(atom))) {
    return { problem: 'has an invalid local part: dots may not lead, trail or repeat' };
  }
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
    return { problem: 'has an invalid domain; use a host name such as example.com (internationalized domains in punycode)' };
  }
  return { email: `${local}@${domain}` };
}

/** The normalized address, or a 400 naming `field`. */
export function normalizeEmail(raw: string, field = 'email'): string {
  const parsed = parseEmail(raw);
  if ('problem' in parsed) {
    throw apiError('invalid_request', `Field "${field}" is not a valid email address: it ${parsed.problem}.`, { fields: [field] });
  }
  return parsed.email;
}

/**
 * The comparison key of an address: every look-up and uniqueness check uses it, so `Ada@example.com`
 * and `ada@example.com` are one account, while the address as typed is what is stored and shown.
 *
 * Computed here, not by the database: SQLite's lower() folds A–Z only and PostgreSQL's follows the
 * database's locale, so a key the database computed would depend on how it was installed. Full Unicode
 * lowercasing (locale-independent `toLowerCase`), because local parts may hold any letter (RFC 6531) and
 * `ÉLODIE@` against `élodie@` is the same second-account trick as `ADA@` against `ada@`. NFC makes
 * canonically equal spellings (`é` as one code point or as `e` + U+0301) one key too.
 *
 * Migration 0007 holds a frozen copy of this function: changing it needs a migration that recomputes
 * the stored keys.
 */
export function emailKey(normalizedEmail: string): string {
  return normalizedEmail.normalize('NFC').toLowerCase().normalize('NFC');
}

/** The key of raw input: of its normalized form when it is an address, else of the trimmed text. */
export function emailKeyOf(raw: string): string {
  const parsed = parseEmail(raw);
  return emailKey('email' in parsed ? parsed.email : raw.trim());
}
