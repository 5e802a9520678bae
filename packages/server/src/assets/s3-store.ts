import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config.js';
import { ApiError } from '../lib/errors.js';
import { checkImageBytes, imageTooLarge, mediaTypeOf, refusalFor, unsupportedImageType } from './checks.js';
import { inspectImage, isImageType, MAX_IMAGE_BYTES, type ImageType } from './image.js';
import {
  IMMUTABLE_CACHE_CONTROL,
  objectKeyPath,
  UPLOAD_TTL_SECONDS,
  type ObjectKey,
  type ObjectStore,
  type StoredObject,
  type UploadBinding,
  type UploadTarget,
} from './object-store.js';

/** How much of an object the post-upload check reads to find its type and dimensions. */
export const VERIFY_PREFIX_BYTES = 64 * 1024;

export interface S3StoreOptions {
  /** Unix milliseconds; tests move the clock to sign already-expired URLs. */
  now?: () => number;
}

function checksumOf(sha256Hex: string): string {
  return Buffer.from(sha256Hex, 'hex').toString('base64');
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

const notUploaded = () =>
  new ApiError(
    'invalid_request',
    'No image was uploaded for this URL. Upload the image with an upload ticket first, then save its publicUrl.',
  );

/**
 * An S3-compatible store. Clients PUT straight to the bucket with a presigned URL whose signature
 * covers Content-Type, Content-Length and x-amz-checksum-sha256, so S3 refuses any other bytes.
 * The bytes never pass through Gatehouse, so `verify` inspects the stored object before its URL
 * may be saved.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly publicUrlPrefix: string;
  readonly client: S3Client;
  private readonly now: () => number;

  constructor(
    private readonly config: S3Config,
    options: S3StoreOptions = {},
  ) {
    this.publicUrlPrefix = `${config.publicBaseUrl}/`;
    this.now = options.now ?? Date.now;
    this.client = new S3Client({
      endpoint: config.endpoint,
      region: config.region,
      credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
      // Path-style addressing works on AWS and on every S3-compatible server (MinIO, R2, Ceph…).
      forcePathStyle: true,
      // Checksums are computed by us and bound explicitly; the SDK's default CRC32 would be
      // calculated over an empty body when presigning.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  publicUrl(key: ObjectKey): string {
    return `${this.publicUrlPrefix}${objectKeyPath(key)}`;
  }

  private async head(key: ObjectKey) {
    try {
      return await this.client.send(
        new HeadObjectCommand({ Bucket: this.config.bucket, Key: objectKeyPath(key), ChecksumMode: 'ENABLED' }),
      );
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw error;
    }
  }

  async exists(key: ObjectKey): Promise<boolean> {
    return (await this.head(key)) !== null;
  }

  async createUploadTarget(binding: UploadBinding): Promise<UploadTarget> {
    const checksum = checksumOf(binding.key.sha256);
    const command = new PutObjectCommand({
      Bucket: this.config.bucket,
      Key: objectKeyPath(binding.key),
      ContentType: binding.contentType,
      ContentLength: binding.contentLength,
      ChecksumSHA256: checksum,
      CacheControl: IMMUTABLE_CACHE_CONTROL,
    });
    const signedAt = this.now();
    const url = await getSignedUrl(this.client, command, {
      expiresIn: UPLOAD_TTL_SECONDS,
      signingDate: new Date(signedAt),
      // The presigner leaves Content-Type unsigned and hoists x-amz-* headers into the query,
      // where S3 does not enforce a checksum. Sign them as headers instead; Cache-Control too, so
      // the bucket serves every object as immutable.
      signableHeaders: new Set(['content-type', 'content-length', 'cache-control']),
      unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
    });
    return {
      url,
      headers: { 'Content-Type': binding.contentType, 'Cache-Control': IMMUTABLE_CACHE_CONTROL, 'x-amz-checksum-sha256': checksum },
      expiresAt: signedAt + UPLOAD_TTL_SECONDS * 1000,
    };
  }

  async put(key: ObjectKey, bytes: Uint8Array, contentType: ImageType): Promise<void> {
    if (await this.exists(key)) return;
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.config.bucket,
        Key: objectKeyPath(key),
        Body: bytes,
        ContentType: contentType,
        ContentLength: bytes.length,
        ChecksumSHA256: checksumOf(key.sha256),
        CacheControl: IMMUTABLE_CACHE_CONTROL,
      }),
    );
  }

  private async read(key: ObjectKey, range?: string): Promise<Buffer> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.config.bucket, Key: objectKeyPath(key), ...(range ? { Range: range } : {}) }),
      );
      if (!response.Body) return Buffer.alloc(0);
      return Buffer.from(await response.Body.transformToByteArray());
    } catch (error) {
      if (statusOf(error) === 404) throw notUploaded();
      throw error;
    }
  }

  private async remove(key: ObjectKey): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: objectKeyPath(key) }));
  }

  /**
   * HEAD for the stored size, type and checksum, then a ranged GET of the first bytes for the
   * magic bytes and dimensions. When the server does not vouch for the SHA-256 checksum (older
   * S3-compatible servers), or the header lies beyond the prefix, the whole object (at most 1 MB)
   * is read and checked here instead. Bad objects are deleted.
   */
  async verify(key: ObjectKey): Promise<StoredObject> {
    const head = await this.head(key);
    if (!head) throw notUploaded();
    try {
      const size = head.ContentLength ?? 0;
      if (size > MAX_IMAGE_BYTES) throw imageTooLarge(size);
      const storedType = mediaTypeOf(head.ContentType);
      if (!isImageType(storedType)) throw unsupportedImageType(head.ContentType ?? '(none)');

      const vouched = head.ChecksumSHA256 === checksumOf(key.sha256);
      if (vouched && size > 0) {
        const prefix = await this.read(key, `bytes=0-${VERIFY_PREFIX_BYTES - 1}`);
        const result = inspectImage(prefix, prefix.length >= size ? 'complete' : 'prefix');
        if (result.ok) {
          if (result.image.type !== storedType) throw checkMismatch(storedType);
          return { contentType: storedType, size, ...dimensions(result.image) };
        }
        if (result.problem !== 'truncated' || prefix.length >= size) throw refusalFor(result, storedType);
      }

      const bytes = await this.read(key);
      if (createHash('sha256').update(bytes).digest('hex') !== key.sha256) {
        throw new ApiError('invalid_request', 'The stored bytes do not match the sha256 they were uploaded under. Upload the image again.');
      }
      const image = checkImageBytes(bytes, { contentType: storedType });
      return { contentType: storedType, size: bytes.length, ...dimensions(image) };
    } catch (error) {
      // Deleting is idempotent, so an object that vanished meanwhile is no special case.
      if (error instanceof ApiError && error.statusCode < 500) await this.remove(key);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function dimensions(image: { width: number; height: number }) {
  return { width: image.width, height: image.height };
}

function checkMismatch(storedType: ImageType): ApiError {
  return new ApiError(
    'unsupported_image_type',
    `The stored object is labelled ${storedType} but its bytes are not. Upload the image again.`,
  );
}
