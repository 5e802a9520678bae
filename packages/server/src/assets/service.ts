import { UPLOAD_PURPOSES, type UploadPurpose, type UploadTicket } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { ApiError, notFound } from '../lib/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Environment } from '../tenancy/settings.js';
import { acceptedImageType, checkImageBytes, imageTooLarge, mediaTypeOf } from './checks.js';
import { FilesystemObjectStore } from './filesystem-store.js';
import { MAX_IMAGE_BYTES, MAX_IMAGE_DIMENSION } from './image.js';
import { assertAcceptableImageUrl, ownAssetPath } from './image-url.js';
import { isValidObjectKey, parseObjectKeyPath, type ObjectStore, type StoredObject, type UploadBinding } from './object-store.js';
import * as q from './queries.js';

export { UPLOAD_PURPOSES, type UploadPurpose };

/** An upload ticket request, as received (docs/uploads.md). */
export interface TicketRequest {
  purpose: string;
  contentType: string;
  contentLength: number;
  sha256: string;
  width: number;
  height: number;
}

export type { UploadTicket };

/**
 * Decides whether the caller may upload for a purpose; throws `403 forbidden` when not. For
 * `organization_image` it must check `org:manage` against the live membership of the session's
 * current organization, never the token's claims.
 */
export type AuthorizePurpose = (purpose: UploadPurpose) => Promise<void>;

function noObject(): ApiError {
  return new ApiError('not_found', 'No image is stored at this URL.');
}

function lengthMismatch(expected: number, actual: number): ApiError {
  return new ApiError(
    'invalid_request',
    `This upload URL is for exactly ${expected} bytes, but ${actual} were sent. Request a new ticket with the file's exact size.`,
  );
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { fields: [field] });
}

export class AssetService {
  constructor(
    private readonly store: Store,
    readonly objects: ObjectStore,
  ) {}

  /**
   * Issues an upload ticket for the environment (docs/uploads.md). Every
   * field is checked before `authorize`, and `authorize` runs before the existence check, so a
   * caller who may not upload learns nothing about what is stored.
   */
  async createUploadTicket(environment: Environment, request: TicketRequest, authorize: AuthorizePurpose): Promise<UploadTicket> {
    const purpose = request.purpose as UploadPurpose;
    if (!UPLOAD_PURPOSES.includes(purpose)) {
      throw invalid(
        'purpose',
        `purpose must be one of ${UPLOAD_PURPOSES.join(', ')}. Project logos are uploaded through the platform API.`,
      );
    }
    const contentType = acceptedImageType(request.contentType);
    const { contentLength, width, height } = request;
    if (contentLength > MAX_IMAGE_BYTES) throw imageTooLarge(contentLength);
    if (!Number.isSafeInteger(contentLength) || contentLength < 1) {
      throw invalid('contentLength', 'contentLength must be the size of the file in bytes, a positive integer.');
    }
    for (const [field, value] of [
      ['width', width],
      ['height', height],
    ] as const) {
      if (value > MAX_IMAGE_DIMENSION) {
        throw new ApiError(
          'image_too_large',
          `The image's ${field} is ${value} pixels; at most ${MAX_IMAGE_DIMENSION}×${MAX_IMAGE_DIMENSION} is accepted. Resize it and try again.`,
          { fields: [field] },
        );
      }
      if (!Number.isSafeInteger(value) || value < 1) {
        throw invalid(field, `${field} must be the image's ${field} in pixels, a positive integer.`);
      }
    }
    if (!/^[0-9a-fA-F]{64}$/.test(request.sha256)) {
      throw invalid('sha256', 'sha256 must be the hex SHA-256 digest of the file: 64 characters 0-9 and a-f.');
    }
    await authorize(purpose);

    const key = { namespace: environment.id, sha256: request.sha256.toLowerCase() };
    const publicUrl = this.objects.publicUrl(key);
    if (await this.objects.exists(key)) return { publicUrl, alreadyExists: true };
    const target = await this.objects.createUploadTarget({ key, contentType, contentLength, width, height });
    return { uploadUrl: target.url, uploadHeaders: target.headers, publicUrl, alreadyExists: false };
  }

  /** The filesystem store, whose signed uploads and public reads this server answers itself. */
  get filesystem(): FilesystemObjectStore | undefined {
    return this.objects instanceof FilesystemObjectStore ? this.objects : undefined;
  }

  /**
   * A PUT to a filesystem upload URL, judged from the URL and headers before the body is read:
   * the signature binds the key, type and length, and the request must match them. Returns what
   * the upload is bound to, for `completeUpload`.
   */
  openUpload(
    params: { namespace: string; sha256: string },
    query: Record<string, unknown>,
    contentTypeHeader: string | undefined,
    declaredLength: number | undefined,
  ): UploadBinding {
    const store = this.filesystem;
    if (!store || !isValidObjectKey(params)) throw noObject();
    const binding = store.verifyUploadUrl({ namespace: params.namespace, sha256: params.sha256 }, query);
    const sent = mediaTypeOf(contentTypeHeader);
    if (sent !== binding.contentType) {
      throw new ApiError(
        'unsupported_media_type',
        `This upload URL is for ${binding.contentType}, but the request has Content-Type ${JSON.stringify(sent || '(none)')}. Send "Content-Type: ${binding.contentType}".`,
      );
    }
    if (declaredLength !== undefined && declaredLength !== binding.contentLength)
      throw lengthMismatch(binding.contentLength, declaredLength);
    return binding;
  }

  /** Stores the bytes of an opened upload once they are exactly the ticket's: length, digest, image. Returns the public URL. */
  async completeUpload(binding: UploadBinding, bytes: Uint8Array): Promise<string> {
    const store = this.filesystem;
    if (!store) throw noObject();
    if (bytes.length !== binding.contentLength) throw lengthMismatch(binding.contentLength, bytes.length);
    if (sha256Hex(bytes) !== binding.key.sha256) {
      throw new ApiError(
        'invalid_request',
        'The SHA-256 digest of the uploaded bytes differs from the sha256 of the ticket. Request a new ticket with the digest of this exact file.',
      );
    }
    checkImageBytes(bytes, binding);
    await store.put(binding.key, bytes);
    return store.publicUrl(binding.key);
  }

  /** A stored image of the filesystem store, by its URL's parts; 404 when there is none. */
  async readObject(params: { namespace: string; sha256: string }): Promise<{ sha256: string; bytes: Buffer; contentType: string }> {
    const store = this.filesystem;
    const key = isValidObjectKey(params) ? { namespace: params.namespace, sha256: params.sha256 } : null;
    const stored = store && key && (await store.read(key));
    if (!key || !stored) throw noObject();
    return { sha256: key.sha256, ...stored };
  }

  /**
   * The one check for an `imageUrl` being saved on a user or organization of `environment` (every
   * PATCH and create that takes one), returning the form to store. https URLs pass; plain http
   * only for this instance's own asset URLs on a loopback host. A URL of this instance's object
   * store, whatever its scheme, must name an object of the caller's environment (organization
   * images live there too) that is stored and passes the store's `verify` (for S3, the HEAD and
   * ranged GET). Every refusal is `400 invalid_request` with `fields: ['imageUrl']`.
   */
  async acceptImageUrl(environment: Environment, raw: string): Promise<string> {
    const prefix = this.objects.publicUrlPrefix;
    const url = assertAcceptableImageUrl(raw, { ownAssetPrefix: prefix });
    const path = ownAssetPath(url, prefix);
    if (path === null) return url.href;
    const key = parseObjectKeyPath(path);
    if (!key || key.namespace !== environment.id || url.search || url.hash) {
      throw invalid(
        'imageUrl',
        'imageUrl is not an upload of this environment. Request an upload ticket and save the publicUrl it returns.',
      );
    }
    try {
      await this.objects.verify(key);
    } catch (error) {
      // The store's own refusal codes (image_too_large, …) describe the object, not this field.
      if (error instanceof ApiError && error.statusCode < 500) throw invalid('imageUrl', `imageUrl cannot be saved: ${error.message}`);
      throw error;
    }
    return url.href;
  }

  /** The S3 post-upload check (HEAD plus a ranged GET), exposed for the PATCH endpoints. */
  async verifyStoredObject(environmentId: string, sha256: string): Promise<StoredObject> {
    const key = { namespace: environmentId, sha256: sha256.toLowerCase() };
    const parsed = parseObjectKeyPath(`${key.namespace}/${key.sha256}`);
    if (!parsed) throw invalid('sha256', 'sha256 must be 64 hex characters.');
    return this.objects.verify(parsed);
  }

  /**
   * Stores a project logo (branding: emails and hosted pages) under the project's own namespace,
   * `{projectId}/{sha256}`, since a logo belongs to the project rather than to either environment.
   */
  async setProjectLogo(projectId: string, bytes: Uint8Array, contentTypeHeader: string): Promise<string> {
    const contentType = acceptedImageType(contentTypeHeader);
    if (bytes.length === 0) throw invalid('body', 'The request body is empty; send the image bytes.');
    checkImageBytes(bytes, { contentType });
    const project = await q.findProjectId(this.store.db, projectId);
    if (!project) throw notFound(`Project ${projectId}`);
    const key = { namespace: project, sha256: sha256Hex(bytes) };
    await this.objects.put(key, bytes, contentType);
    const logoUrl = this.objects.publicUrl(key);
    await q.setProjectLogoUrl(this.store.db, project, logoUrl);
    return logoUrl;
  }

  /**
   * A project logo request, judged from its headers before the body is read: an image type we
   * accept, and a declared length within the limit.
   */
  checkLogoRequest(contentTypeHeader: string | undefined, declaredLength: number | undefined): void {
    if (contentTypeHeader === undefined || contentTypeHeader.trim() === '') {
      throw new ApiError('unsupported_media_type', 'Send the logo bytes with a Content-Type of image/png, image/jpeg or image/webp.');
    }
    acceptedImageType(contentTypeHeader);
    if (declaredLength !== undefined && declaredLength > MAX_IMAGE_BYTES) throw imageTooLarge(declaredLength);
  }

  async removeProjectLogo(projectId: string): Promise<void> {
    if (!(await q.setProjectLogoUrl(this.store.db, projectId, null))) throw notFound(`Project ${projectId}`);
  }
}
