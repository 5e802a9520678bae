import type { Metadata } from '@gatehouse/contract';
import { apiError } from '../lib/errors.js';
import { exceedsDepth } from '../lib/json.js';

export { exceedsDepth };

/** Each metadata object's most, as UTF-8 JSON. */
export const METADATA_MAX_BYTES = 8 * 1024;
/** Deep enough for any sensible document; bounds the merge's recursion. */
const MAX_DEPTH = 16;

export type MetadataField = 'publicMetadata' | 'privateMetadata' | 'unsafeMetadata';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}


/** The stored text of a metadata object, or a 400 naming the field. */
export function metadataText(value: unknown, field: MetadataField): string {
  if (!isObject(value)) throw apiError('invalid_request', `Field "${field}" must be a JSON object.`, { fields: [field] });
  if (exceedsDepth(value, MAX_DEPTH)) {
    throw apiError('invalid_request', `Field "${field}" is nested more than ${MAX_DEPTH} levels deep; flatten it.`, { fields: [field] });
  }
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > METADATA_MAX_BYTES) {
    throw apiError(
      'invalid_request',
      `Field "${field}" is ${bytes} bytes as JSON, over the ${METADATA_MAX_BYTES}-byte limit. Keep large data in your own database and store its id here.`,
      { fields: [field] },
    );
  }
  return text;
}

export function parseMetadata(text: string): Metadata {
  return JSON.parse(text) as Metadata;
}

/**
 * `patch` merged into `current`, deeply: objects merge key by key, anything else replaces, and a
 * null removes its key (the merge of Clerk's updateUserMetadata).
 */
export function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (isObject(value) && isObject(merged[key])) merged[key] = mergeMetadata(merged[key] as Record<string, unknown>, value);
    else merged[key] = value;
  }
  return merged;
}
