import { randomBytes } from 'node:crypto';
import { apiError } from '../lib/errors.js';
import { SLUG_MAX_LENGTH } from '@gatehouse/contract';

export { SLUG_MAX_LENGTH };
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export function validSlug(slug: string, field = 'slug'): string {
  if (!SLUG.test(slug)) {
    throw apiError(
      'invalid_request',
      `Field "${field}" must be 1 to ${SLUG_MAX_LENGTH} characters of lowercase letters, digits and "-", starting and ending with a letter or digit.`,
      { fields: [field] },
    );
  }
  return slug;
}

/** A slug from a display name: "Acme, Inc." → "acme-inc"; accents are dropped, anything else becomes "-". */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX_LENGTH - 6)
    .replace(/-+$/, '');
  return slug === '' ? 'org' : slug;
}

/** The base with a short random suffix, for when the generated slug is taken. */
export function suffixedSlug(base: string): string {
  return `${base.slice(0, SLUG_MAX_LENGTH - 6)}-${randomBytes(4).toString('hex').slice(0, 5)}`;
}
