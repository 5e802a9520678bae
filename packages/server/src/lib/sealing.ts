import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveSubkey } from './cursor.js';

/**
 * Secrets the server must read back (so they cannot be hashes), sealed with AES-256-GCM under a
 * key derived from the instance secret for one purpose, each bound to the record it belongs to
 * (`binding`, the additional data): a sealed value copied to another record does not open.
 */
export class Sealer {
  private readonly key: Buffer;

  constructor(instanceSecret: string, purpose: string) {
    this.key = deriveSubkey(instanceSecret, purpose);
  }

  seal(binding: string, secret: Uint8Array): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(binding));
    const ciphertext = Buffer.concat([cipher.update(secret), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** Throws when the value is not one this sealer made for `binding`. */
  open(binding: string, sealed: string): Buffer {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || !ciphertext) throw new Error(`A sealed secret of ${binding} is in an unknown format`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  }
}
