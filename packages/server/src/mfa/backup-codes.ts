import { createHmac, randomBytes } from 'node:crypto';

/**
 * Backup codes: 10 codes of 10 characters from [a-z0-9] (about 51 bits each), shown once. Only an
 * HMAC of each is stored, keyed by a key derived from the instance secret and bound to the user, so
 * a copy of the database alone cannot be searched for them.
 */

export const BACKUP_CODE_COUNT = 10;
const LENGTH = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** The largest multiple of 36 below 256: bytes at or above it are drawn again (no bias). */
const UNBIASED = 252;

export function newBackupCodes(): string[] {
  const codes = new Set<string>();
  while (codes.size < BACKUP_CODE_COUNT) {
    let code = '';
    while (code.length < LENGTH) {
      for (const byte of randomBytes(16)) {
        if (byte < UNBIASED && code.length < LENGTH) code += ALPHABET[byte % 36];
      }
    }
    codes.add(code);
  }
  return [...codes];
}

/** How a code is compared: without case, `-` or spaces. */
export function normalizeBackupCode(input: string): string {
  return input.replace(/[\s-]/g, '').toLowerCase();
}

export function backupCodeHash(key: Buffer, environmentId: string, userId: string, code: string): string {
  return createHmac('sha256', key)
    .update(`${environmentId}/${userId}/${normalizeBackupCode(code)}`)
    .digest('hex');
}
