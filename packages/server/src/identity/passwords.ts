import { hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import { verifyStoredHash } from './password-digests.js';

/**
 * argon2id with the OWASP minimum: 19 MiB, 2 passes, 1 lane. @node-rs/argon2 runs each hash on the
 * libuv thread pool, so hashing never blocks the event loop.
 */
export const ARGON2_OPTIONS = { algorithm: 2 as const, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  // Options are typed with a const enum, which isolatedModules cannot import; 2 is Argon2id.
  return hash(password, ARGON2_OPTIONS as Parameters<typeof hash>[1]);
}

let dummy: Promise<string> | undefined;

/** A hash of a random password with the same parameters, so a miss costs what a hit costs. */
function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(32).toString('base64url'));
  return dummy;
}

/**
 * Verifies a password against a stored hash, or against a dummy hash when there is none (unknown
 * user, or a user without a password), so both paths do the same argon2 work.
 */
export async function verifyPassword(storedHash: string | null | undefined, password: string): Promise<boolean> {
  if (!storedHash) {
    await verify(await dummyHash(), password).catch(() => false);
    return false;
  }
  // argon2 PHC strings, or a digest imported from another system (password-digests.ts).
  return verifyStoredHash(storedHash, password);
}

/** Computes the dummy hash ahead of the first sign-in, so that one is not slower. */
export function warmUpPasswordHashing(): Promise<void> {
  return dummyHash().then(() => undefined);
}
