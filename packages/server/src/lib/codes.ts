import { createHmac, randomInt } from 'node:crypto';
import { constantTimeEqual } from './crypto.js';
import { apiError, type ApiError } from './errors.js';

/**
 * Six-digit codes sent by email (sign-in codes, sign-up codes, domain codes). A code is stored only
 * as an HMAC bound to its row (`binding`), so a stolen table holds nothing to type in, and a code of
 * one row is no code of another. Each use keeps its own row, its tries and its expiry; what a try
 * does is the same everywhere: compare in constant time, count a wrong one, consume a right one once.
 */
export class VerificationCodes {
  constructor(private readonly key: Buffer) {}

  private hash(binding: string, code: string): string {
    return createHmac('sha256', this.key).update(`${binding}:${code}`).digest('hex');
  }

  /** A fresh code, and what to store for it. */
  create(binding: string): { code: string; hash: string } {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    return { code, hash: this.hash(binding, code) };
  }

  /**
   * Judges a try. A wrong code runs `recordWrong` (which answers the tries left); a right one runs
   * `consume` (false when a racing try consumed it first). Nothing is thrown: a caller inside a
   * transaction throws after it, so that the wrong try it recorded commits.
   */
  async check(input: {
    stored: string;
    binding: string;
    code: string;
    recordWrong: () => Promise<number>;
    consume: () => Promise<boolean>;
  }): Promise<{ ok: true } | { ok: false; triesLeft: number } | { ok: false; consumed: true }> {
    if (!constantTimeEqual(input.stored, this.hash(input.binding, input.code))) return { ok: false, triesLeft: await input.recordWrong() };
    return (await input.consume()) ? { ok: true } : { ok: false, consumed: true };
  }
}

/** 401 for a wrong code: the tries left, or, at none, that it is void and what to do (`whenVoid`). */
export function wrongCode(triesLeft: number, whenVoid: string, fields?: string[]): ApiError {
  return apiError(
    'invalid_credentials',
    triesLeft > 0 ? `The code is incorrect; ${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left.` : `The code is incorrect and is now void${whenVoid}`,
    fields ? { fields } : undefined,
  );
}
