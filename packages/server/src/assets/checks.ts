import { ApiError } from '../lib/errors.js';
import { inspectImage, isImageType, MAX_IMAGE_BYTES, TYPE_NAMES, type ImageInfo, type ImageType, type InspectResult } from './image.js';

const ACCEPTED = 'Upload a PNG, JPEG or WebP image instead.';

/** The bare media type of a Content-Type value: lowercase, without parameters. */
export function mediaTypeOf(raw: string | undefined): string {
  return (raw ?? '').split(';')[0]!.trim().toLowerCase();
}

export function unsupportedImageType(raw: string): ApiError {
  const type = mediaTypeOf(raw);
  if (type === 'image/svg+xml' || type.includes('svg')) {
    return new ApiError(
      'unsupported_image_type',
      `SVG images are not accepted: an SVG can carry script, and these images render on sign-in screens. ${ACCEPTED}`,
    );
  }
  if (type === 'image/jpg') return new ApiError('unsupported_image_type', 'Use the media type "image/jpeg" for JPEG images.');
  return new ApiError(
    'unsupported_image_type',
    `The type ${JSON.stringify(raw)} is not accepted; the accepted types are image/png, image/jpeg and image/webp.`,
  );
}

/** The accepted image type named by a Content-Type value, or a 422 explaining the refusal. */
export function acceptedImageType(raw: string): ImageType {
  const type = mediaTypeOf(raw);
  if (!isImageType(type)) throw unsupportedImageType(raw);
  return type;
}

export function imageTooLarge(bytes: number): ApiError {
  return new ApiError(
    'image_too_large',
    `The image is ${bytes} bytes; at most ${MAX_IMAGE_BYTES} bytes (1 MB) is accepted. Resize or compress it and try again.`,
  );
}

/** Maps a failed inspection to the refusal a client sees. */
export function refusalFor(result: Extract<InspectResult, { ok: false }>, declared: ImageType): ApiError {
  const name = TYPE_NAMES[declared];
  switch (result.problem) {
    case 'too_large':
      return new ApiError('image_too_large', `The image is too large: ${result.detail}. Resize it and try again.`);
    case 'unrecognized':
      return new ApiError('unsupported_image_type', `The uploaded bytes are not a ${name} image: ${result.detail}. ${ACCEPTED}`);
    case 'unsupported':
      return new ApiError('unsupported_image_type', `The ${name} image is not accepted: ${result.detail}.`);
    case 'malformed':
    case 'truncated':
      return new ApiError(
        'unsupported_image_type',
        `The uploaded bytes are not a well-formed ${name} image: ${result.detail}. Export the image again from an image editor and upload the file unchanged.`,
      );
  }
}

/**
 * Checks a whole file against what was declared for it: the magic bytes must be the declared
 * type, the structure must be complete with nothing appended, and the decoded dimensions must
 * match when they were declared.
 */
export function checkImageBytes(bytes: Uint8Array, declared: { contentType: ImageType; width?: number; height?: number }): ImageInfo {
  if (bytes.length > MAX_IMAGE_BYTES) throw imageTooLarge(bytes.length);
  const result = inspectImage(bytes, 'complete');
  if (!result.ok) throw refusalFor(result, declared.contentType);
  const image = result.image;
  if (image.type !== declared.contentType) {
    throw new ApiError(
      'unsupported_image_type',
      `The image was declared as ${declared.contentType}, but the bytes are a ${TYPE_NAMES[image.type]} image. Declare the file's real type.`,
    );
  }
  if (
    declared.width !== undefined &&
    declared.height !== undefined &&
    (image.width !== declared.width || image.height !== declared.height)
  ) {
    throw new ApiError(
      'invalid_request',
      `The image is ${image.width}×${image.height} pixels, but ${declared.width}×${declared.height} was declared. Request a new upload ticket with the image's real width and height.`,
    );
  }
  return image;
}
