import { ApiError } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import { MAX_IMAGE_URL_LENGTH } from '@gatehouse/contract';

export { MAX_IMAGE_URL_LENGTH };

/**
 * Checks an `imageUrl` about to be saved for a user or organization of `environment` and returns
 * the form to store; throws `400 invalid_request` (fields: imageUrl) otherwise. Services take it
 * as an option so that every write of an image URL goes through the one rule,
 * `AssetService.acceptImageUrl`.
 */
export type ImageUrlCheck = (environment: Environment, raw: string) => Promise<string>;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const OWN_ASSET_PATH = /^[a-z0-9_]+\/[0-9a-f]{64}$/;

export function imageUrlRefusal(detail: string): ApiError {
  return new ApiError(
    'invalid_request',
    `imageUrl ${detail}. Use an https:// URL, such as the publicUrl of an upload ticket, or null to remove the image.`,
    { fields: ['imageUrl'] },
  );
}

/**
 * The URL part of the rule (docs/uploads.md): https only. The one
 * exception is an asset URL this instance issued itself (under `ownAssetPrefix`, the object
 * store's public URL prefix) on a loopback host, which is plain http during local development.
 * Returns the parsed URL; its `href` is the form to store. `AssetService.acceptImageUrl` adds the
 * checks on own asset URLs (environment, stored and verified); nothing else should call this.
 *
 * The exception is matched on the parsed URL, not on the text, so look-alikes such as
 * `http://localhost.evil.test/…` or `http://127.0.0.1.evil.test/…` and dot-segments that walk out of
 * the asset path do not pass.
 */
export function assertAcceptableImageUrl(raw: string, options: { ownAssetPrefix: string }): URL {
  if (raw.length > MAX_IMAGE_URL_LENGTH) throw imageUrlRefusal(`is longer than ${MAX_IMAGE_URL_LENGTH} characters`);
  // The URL parser would quietly drop or encode these; refuse rather than store a different URL.
  if (/[\s\p{Cc}]/u.test(raw)) throw imageUrlRefusal('must not contain whitespace or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw imageUrlRefusal('is not an absolute URL');
  }
  if (url.username || url.password) throw imageUrlRefusal('must not carry a user name or password');
  if (url.protocol === 'https:') {
    if (!url.hostname) throw imageUrlRefusal('has no host');
    return url;
  }
  if (url.protocol === 'http:' && isOwnLoopbackAsset(url, options.ownAssetPrefix)) return url;
  if (url.protocol === 'http:') {
    throw imageUrlRefusal('must use https (plain http is accepted only for this instance’s own uploads on localhost)');
  }
  throw imageUrlRefusal(`must use https, not ${url.protocol.replace(/:$/, '')}`);
}

function isOwnLoopbackAsset(url: URL, ownAssetPrefix: string): boolean {
  const own = new URL(ownAssetPrefix);
  if (!LOOPBACK_HOSTS.has(url.hostname) || url.origin !== own.origin) return false;
  if (url.search || url.hash || !url.pathname.startsWith(own.pathname)) return false;
  return OWN_ASSET_PATH.test(url.pathname.slice(own.pathname.length));
}

/** The part of an own asset URL after the prefix (`{namespace}/{sha256}`), or null. */
export function ownAssetPath(url: URL, ownAssetPrefix: string): string | null {
  const own = new URL(ownAssetPrefix);
  if (url.origin !== own.origin || !url.pathname.startsWith(own.pathname)) return null;
  return url.pathname.slice(own.pathname.length);
}
