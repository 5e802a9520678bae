import { createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { ApiError } from '../lib/errors.js';
import { constantTimeEqual } from '../lib/crypto.js';
import { detectImageType, inspectImage, isImageType, MAX_IMAGE_BYTES, type ImageType } from './image.js';
import {
  objectKeyPath,
  UPLOAD_TTL_SECONDS,
  type ObjectKey,
  type ObjectStore,
  type StoredObject,
  type UploadBinding,
  type UploadTarget,
} from './object-store.js';

export interface FilesystemStoreOptions {
  /** Objects live in `{root}/{namespace}/{sha256}`; temporary files in `{root}/.tmp`. */
  root: string;
  /** The instance's base URL; uploads and reads are served under `{baseUrl}/v1/assets/`. */
  baseUrl: string;
  /** HMAC key for upload URLs: deriveSubkey(instanceSecret, 'uploads'). */
  signingKey: Buffer;
  /** Unix milliseconds; tests move the clock. */
  now?: () => number;
}

export const ASSET_ROUTE_PREFIX = '/v1/assets/';

// Temporary files older than this belong to a process that died mid-write.
const STALE_TEMP_MS = 10 * 60 * 1000;

/**
 * The embedded object store. Gatehouse itself serves the signed PUT (see assets/routes.ts) and the
 * public GET. Writes are atomic: bytes go to a temporary file that is fsynced and then hard-linked
 * into place. A link, unlike a rename, never replaces an existing file, so of two concurrent PUTs
 * of one object exactly one creates it and the other finds it there.
 */
export class FilesystemObjectStore implements ObjectStore {
  readonly kind = 'filesystem' as const;
  readonly publicUrlPrefix: string;
  private readonly tmpDir: string;
  private readonly now: () => number;

  private constructor(private readonly options: FilesystemStoreOptions) {
    this.publicUrlPrefix = `${options.baseUrl}${ASSET_ROUTE_PREFIX}`;
    this.tmpDir = path.join(options.root, '.tmp');
    this.now = options.now ?? Date.now;
  }

  static async open(options: FilesystemStoreOptions): Promise<FilesystemObjectStore> {
    const store = new FilesystemObjectStore(options);
    await mkdir(store.tmpDir, { recursive: true });
    await store.removeStaleTemporaryFiles();
    return store;
  }

  private async removeStaleTemporaryFiles(): Promise<void> {
    const cutoff = Date.now() - STALE_TEMP_MS;
    for (const name of await readdir(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      const info = await stat(file).catch(() => null);
      if (info && info.mtimeMs < cutoff) await rm(file, { force: true });
    }
  }

  /** The directory objects are stored under. */
  get root(): string {
    return this.options.root;
  }

  private pathOf(key: ObjectKey): string {
    return path.join(this.options.root, key.namespace, key.sha256);
  }

  publicUrl(key: ObjectKey): string {
    return `${this.publicUrlPrefix}${objectKeyPath(key)}`;
  }

  async exists(key: ObjectKey): Promise<boolean> {
    return (await stat(this.pathOf(key)).catch(() => null))?.isFile() ?? false;
  }

  private sign(binding: UploadBinding, expires: number): string {
    const payload = [
      'gatehouse-upload-v1',
      objectKeyPath(binding.key),
      binding.contentType,
      binding.contentLength,
      binding.width,
      binding.height,
      expires,
    ].join('\n');
    return createHmac('sha256', this.options.signingKey).update(payload).digest('base64url');
  }

  async createUploadTarget(binding: UploadBinding): Promise<UploadTarget> {
    const expires = Math.floor(this.now() / 1000) + UPLOAD_TTL_SECONDS;
    const query = new URLSearchParams({
      type: binding.contentType,
      length: String(binding.contentLength),
      width: String(binding.width),
      height: String(binding.height),
      expires: String(expires),
      signature: this.sign(binding, expires),
    });
    return { url: `${this.publicUrl(binding.key)}?${query}`, headers: { 'Content-Type': binding.contentType }, expiresAt: expires * 1000 };
  }

  /**
   * The binding of a signed upload URL for `key`, or a 401 when the signature does not verify for
   * this key or has expired. The signature is checked before anything else is read from the query.
   */
  verifyUploadUrl(key: ObjectKey, query: Record<string, unknown>): UploadBinding {
    const invalid = () =>
      new ApiError(
        'unauthenticated',
        'The upload URL is invalid or was altered. Request a new upload ticket and use its uploadUrl unchanged.',
      );
    const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : '');
    const integer = (name: string) => (/^[1-9][0-9]{0,9}$/.test(text(name)) ? Number(text(name)) : NaN);
    const type = text('type');
    const binding = {
      key,
      contentType: type as ImageType,
      contentLength: integer('length'),
      width: integer('width'),
      height: integer('height'),
    };
    const expires = integer('expires');
    if (!isImageType(type) || [binding.contentLength, binding.width, binding.height, expires].some(Number.isNaN)) throw invalid();
    if (!constantTimeEqual(text('signature'), this.sign(binding, expires))) throw invalid();
    if (this.now() >= expires * 1000) {
      throw new ApiError(
        'unauthenticated',
        `The upload URL expired at ${new Date(expires * 1000).toISOString()}; upload URLs are valid for ${UPLOAD_TTL_SECONDS / 60} minutes. Request a new upload ticket.`,
      );
    }
    return binding;
  }

  async put(key: ObjectKey, bytes: Uint8Array): Promise<void> {
    const final = this.pathOf(key);
    if (await this.exists(key)) return;
    await mkdir(path.dirname(final), { recursive: true });
    const temporary = path.join(this.tmpDir, `${key.sha256}.${randomBytes(8).toString('hex')}`);
    try {
      const handle = await open(temporary, 'wx', 0o644);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await link(temporary, final);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return; // A concurrent PUT of the same bytes stored it first.
      }
      await syncDirectory(path.dirname(final));
    } finally {
      await rm(temporary, { force: true });
    }
  }

  /** The stored bytes and their type, or null. Stored files passed every check on PUT. */
  async read(key: ObjectKey): Promise<{ bytes: Buffer; contentType: ImageType } | null> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const contentType = detectImageType(bytes);
    return contentType ? { bytes, contentType } : null;
  }

  async verify(key: ObjectKey): Promise<StoredObject> {
    const stored = await this.read(key);
    if (!stored) {
      throw new ApiError(
        'invalid_request',
        'No image was uploaded for this URL. Upload the image with an upload ticket first, then save its publicUrl.',
      );
    }
    // Bytes reach this store only through the checked PUT; read the header again as a guard
    // against a file placed on disk by other means.
    const result = inspectImage(stored.bytes, 'prefix');
    if (!result.ok || stored.bytes.length > MAX_IMAGE_BYTES) {
      throw new ApiError('invalid_request', 'The stored object is not an acceptable image. Upload the image again.');
    }
    return { contentType: result.image.type, size: stored.bytes.length, width: result.image.width, height: result.image.height };
  }

  async close(): Promise<void> {}
}

async function syncDirectory(directory: string): Promise<void> {
  // Makes the new directory entry durable; some platforms cannot open a directory, which is fine.
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}
