import path from 'node:path';
import type { Config } from '../config.js';
import { deriveSubkey } from '../lib/cursor.js';
import { FilesystemObjectStore } from './filesystem-store.js';
import type { ObjectStore } from './object-store.js';

/** The object store the configuration selects: S3 when S3_* is set, else the data directory. */
export async function openObjectStore(config: Pick<Config, 'baseUrl' | 'dataDir' | 's3'>, instanceSecret: string): Promise<ObjectStore> {
  // The AWS SDK is the largest dependency; a filesystem deployment never loads it.
  if (config.s3) return new (await import('./s3-store.js')).S3ObjectStore(config.s3);
  return FilesystemObjectStore.open({
    root: path.join(config.dataDir, 'objects'),
    baseUrl: config.baseUrl,
    signingKey: deriveSubkey(instanceSecret, 'uploads'),
  });
}

export function describeObjectStore(config: Pick<Config, 'dataDir' | 's3'>): string {
  return config.s3 ? `S3 bucket ${config.s3.bucket} at ${config.s3.endpoint}` : `filesystem at ${path.join(config.dataDir, 'objects')}`;
}
