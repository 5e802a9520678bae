import { apiError } from '../http/errors.js';

export const IMAGE_URL_MAX_LENGTH = 2048;

/**
 * The one check for a profile or organization `imageUrl`: an absolute https URL with a host and no
 * credentials. (DESIGN.md also admits this instance's own asset URLs over plain http on a loopback
 * host during local development; that exception belongs to the uploads feature and goes here,
 * using `baseUrl`.)
 */
export function assertAcceptableImageUrl(raw: string, _baseUrl: string, field = 'imageUrl'): string {
  const refuse = (why: string) => apiError('invalid_request', `Field "${field}" ${why}`, { fields: [field] });
  if (raw.length > IMAGE_URL_MAX_LENGTH) throw refuse(`is longer than ${IMAGE_URL_MAX_LENGTH} characters.`);
  if (/[\s\p{Cc}]/u.test(raw)) throw refuse('must not contain whitespace or control characters.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not an absolute URL; give an https:// URL, or null to remove the picture.');
  }
  if (url.protocol !== 'https:') throw refuse('must be an https:// URL; other schemes are refused.');
  if (url.username !== '' || url.password !== '') throw refuse('must not carry a user name or password.');
  if (url.hostname === '') throw refuse('must name a host.');
  return raw;
}
