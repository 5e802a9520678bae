import { hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import { ARGON2_OPTIONS, needsRehash, verifyStoredHash } from './password-digests.js';

export { ARGON2_OPTIONS };

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

/** One argon2 verification at this service's cost whose answer is ignored. */
async function spendArgon2(password: string): Promise<void> {
  await verify(await dummyHash(), password).catch(() => false);
}

/**
 * Per scope (an environment), the last imported digest (bcrypt, pbkdf2, Firebase scrypt, argon2 of
 * other costs) checked on this node. A failure against a native hash, or an unknown user, also
 * verifies against it (answer ignored), as a failure against an imported digest also spends an
 * argon2 verification: within an environment (whose imports share a hasher and its costs), every
 * failure then costs one argon2 check plus one check of the imported format, whatever the account.
 */
const importedSeen = new Map<string, string>();
const IMPORTED_SCOPES_KEPT = 10_000;

function rememberImported(scope: string, stored: string): void {
  importedSeen.delete(scope);
  importedSeen.set(scope, stored);
  if (importedSeen.size > IMPORTED_SCOPES_KEPT) importedSeen.delete(importedSeen.keys().next().value!);
}

async function spendImported(scope: string | undefined, password: string): Promise<void> {
  const stored = scope === undefined ? undefined : importedSeen.get(scope);
  if (stored) await verifyStoredHash(stored, password).catch(() => false);
}

/**
 * Verifies a password against a stored hash, or against a dummy hash when there is none (unknown
 * user, or a user without a password), so both paths do the same argon2 work. Every failure costs
 * the same whatever the stored hasher (imported accounts must not be told apart by their timing
 * until their first sign-in rehashes them): a failed imported digest also spends an argon2 check,
 * and a failed native check also spends a check of the scope's imported format (`importedSeen`).
 */
export async function verifyPassword(storedHash: string | null | undefined, password: string, scope?: string): Promise<boolean> {
  if (!storedHash) {
    await spendArgon2(password);
    await spendImported(scope, password);
    return false;
  }
  if (!needsRehash(storedHash)) {
    const ok = await verifyStoredHash(storedHash, password);
    if (!ok) await spendImported(scope, password);
    return ok;
  }
  // argon2 PHC strings of other costs, or a digest imported from another system (password-digests.ts).
  if (scope !== undefined) rememberImported(scope, storedHash);
  const ok = await verifyStoredHash(storedHash, password);
  if (!ok) await spendArgon2(password);
  return ok;
}

/** Computes the dummy hash ahead of the first sign-in, so that one is not slower. */
export function warmUpPasswordHashing(): Promise<void> {
  return dummyHash().then(() => undefined);
}
