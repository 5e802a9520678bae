import type { ImageType } from './image.js';

/**
 * Objects are content-addressed inside a namespace: `{environmentId}/{sha256}` for uploads and
 * `{projectId}/{sha256}` for project branding. The namespace keeps one tenant from learning what
 * another stored (an existence check only ever looks inside the caller's namespace).
 */
export interface ObjectKey {
  namespace: string;
  sha256: string;
}

const NAMESPACE = /^(env|proj)_[0-9a-z]{1,64}$/;
const SHA256 = /^[0-9a-f]{64}$/;

export function isValidObjectKey(key: { namespace: string; sha256: string }): key is ObjectKey {
  return NAMESPACE.test(key.namespace) && SHA256.test(key.sha256);
}

export function objectKeyPath(key: ObjectKey): string {
  return `${key.namespace}/${key.sha256}`;
}

/** Parses `{namespace}/{sha256}`, or returns null. */
export function parseObjectKeyPath(path: string): ObjectKey | null {
  const [namespace, sha256, extra] = path.split('/');
  if (namespace === undefined || sha256 === undefined || extra !== undefined) return null;
  const key = { namespace, sha256 };
  return isValidObjectKey(key) ? key : null;
}

/** What a signed upload is bound to. */
export interface UploadBinding {
  key: ObjectKey;
  contentType: ImageType;
  contentLength: number;
  width: number;
  height: number;
}

export interface UploadTarget {
  url: string;
  /** Headers the PUT must carry exactly (Content-Length is set by any HTTP client). */
  headers: Record<string, string>;
  /** Unix milliseconds. */
  expiresAt: number;
}

export interface StoredObject {
  contentType: ImageType;
  size: number;
  width: number;
  height: number;
}

export interface ObjectStore {
  readonly kind: 'filesystem' | 's3';
  /** Every public URL of this store starts with this prefix, which ends with '/'. */
  readonly publicUrlPrefix: string;
  publicUrl(key: ObjectKey): string;
  exists(key: ObjectKey): Promise<boolean>;
  /** A signed PUT, valid for UPLOAD_TTL_SECONDS, that accepts only the bound bytes. */
  createUploadTarget(binding: UploadBinding): Promise<UploadTarget>;
  /** Stores bytes the caller has already checked. Storing an object that exists changes nothing. */
  put(key: ObjectKey, bytes: Uint8Array, contentType: ImageType): Promise<void>;
  /**
   * Confirms that the stored object is an acceptable image of the type it is stored as, and
   * returns what it is; throws a 4xx ApiError otherwise (removing the object, where the store can
   * hold unchecked bytes). Call it before a URL of this store is saved on a user or organization.
   */
  verify(key: ObjectKey): Promise<StoredObject>;
  close(): Promise<void>;
}

export const UPLOAD_TTL_SECONDS = 300;

/** Objects are content-addressed, so a URL's bytes never change: cache them for a year. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
