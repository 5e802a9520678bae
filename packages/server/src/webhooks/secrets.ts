import type { EnvironmentId } from '../lib/ids.js';
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { deriveSubkey } from '../lib/cursor.js';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` with one whsec_ secret. */
export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/**
 * Endpoint secrets are kept sealed (AES-256-GCM under a key derived from the instance secret, bound
 * to the environment and endpoint), since the server must read them back to sign: unlike API keys
 * they cannot be stored as hashes.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(instanceSecret: string) {
    this.key = deriveSubkey(instanceSecret, 'webhook-secrets');
  }

  seal(environmentId: EnvironmentId, endpointId: string, secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`${environmentId}/${endpointId}`));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open(environmentId: EnvironmentId, endpointId: string, sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || !ciphertext) throw new Error(`Webhook endpoint ${endpointId} has a secret in an unknown format`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${environmentId}/${endpointId}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** The secrets that sign a delivery now: the current one, and a rotated-out one within its grace. */
  signingSecrets(
    row: { environment_id: EnvironmentId; id: string; secret: string; previous_secret: string | null; previous_secret_until: number | null },
    now: number,
  ): string[] {
    const secrets = [this.open(row.environment_id, row.id, row.secret)];
    if (row.previous_secret !== null && row.previous_secret_until !== null && now < row.previous_secret_until) {
      secrets.push(this.open(row.environment_id, row.id, row.previous_secret));
    }
    return secrets;
  }
}
