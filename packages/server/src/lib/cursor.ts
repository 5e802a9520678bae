import { createHmac, hkdfSync } from 'node:crypto';
import { apiError } from './errors.js';
import { constantTimeEqual } from './crypto.js';

/** A purpose-bound key derived from the instance secret, so one secret never serves two uses. */
export function deriveSubkey(instanceSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', instanceSecret, 'gatehouse', purpose, 32));
}

/**
 * Opaque pagination cursors: base64url JSON plus an HMAC, so a client can neither read a cursor's
 * meaning as a contract nor forge one that reaches rows it was not given.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url').slice(0, 22);
  }

  encode(value: Record<string, string | number>): string {
    const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  decode<T extends Record<string, string | number>>(cursor: string): T {
    const [payload, mac, extra] = cursor.split('.');
    if (!payload || !mac || extra !== undefined || !constantTimeEqual(mac, this.mac(payload))) {
      throw apiError('invalid_request', 'The cursor is invalid or was altered. Pass back the nextCursor value exactly as received.', {
        fields: ['cursor'],
      });
    }
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
  }
}
