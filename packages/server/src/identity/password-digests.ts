import { verify as verifyArgon2 } from '@node-rs/argon2';
import { createCipheriv, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { apiError } from '../lib/errors.js';
import { requireLazily } from '../lib/lazy.js';

/**
 * argon2id with the OWASP minimum: 19 MiB, 2 passes, 1 lane. @node-rs/argon2 runs each hash on the
 * libuv thread pool, so hashing never blocks the event loop.
 */
export const ARGON2_OPTIONS = { algorithm: 2 as const, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * Password digests imported from another system (POST /v1/users with passwordDigest and
 * passwordHasher), kept as they came and verified with their own algorithm until the user's first
 * sign-in rehashes the password to argon2id. Each hasher's costs are bounded here, so an imported
 * digest cannot make a sign-in take unbounded time or memory.
 */

export const PASSWORD_HASHERS = ['bcrypt', 'argon2id', 'argon2i', 'scrypt_firebase', 'pbkdf2_sha256'] as const;
export type PasswordHasher = (typeof PASSWORD_HASHERS)[number];

/** Stored Firebase digests carry this prefix; the other formats describe themselves. */
const FIREBASE_PREFIX = '$scrypt_firebase$';

const BCRYPT = /^\$2([aby])\$(\d{2})\$[./A-Za-z0-9]{53}$/;
const ARGON2 = /^\$(argon2id|argon2i)\$(?:v=(16|19)\$)?m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{16,})$/;
const PBKDF2 = /^pbkdf2_sha256\$(\d{1,8})\$([^$]{1,128})\$([A-Za-z0-9+/]{43}=)$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

// Bounded so that an imported digest cannot make one wrong-password try cost seconds or hundreds of
// MiB of a pool thread, for every tenant: bcrypt 12 is Laravel's and Devise's default (Clerk and
// Supabase export 10), argon2 64 MiB × 10 passes is above every common default, Firebase's defaults
// are 8 rounds and mem cost 14, Django's pbkdf2 is 1.2M.
const LIMITS = {
  bcryptCost: 12,
  argon2MemoryKiB: 65_536,
  argon2Passes: 10,
  argon2Lanes: 16,
  pbkdf2Iterations: 2_000_000,
  firebaseRounds: 10,
  firebaseMemCost: 15,
};

function refuse(hasher: string, message: string): never {
  throw apiError('invalid_request', `Field "passwordDigest" is not a ${hasher} digest: ${message}`, { fields: ['passwordDigest'] });
}

function base64(value: string): boolean {
  return value.length > 0 && value.length % 4 === 0 && BASE64.test(value);
}

/**
 * Checks an imported digest against its hasher's format and cost bounds and returns what is stored
 * in password_hash; a 400 naming passwordDigest otherwise.
 */
export function storedDigest(hasher: PasswordHasher, digest: string): string {
  switch (hasher) {
    case 'bcrypt': {
      const match = BCRYPT.exec(digest);
      if (!match) refuse(hasher, 'expected $2a$, $2b$ or $2y$, a two-digit cost, and 53 characters of salt and hash.');
      const cost = Number(match[2]);
      if (cost < 4 || cost > LIMITS.bcryptCost) refuse(hasher, `its cost ${cost} is outside 4 to ${LIMITS.bcryptCost}.`);
      return digest;
    }
    case 'argon2id':
    case 'argon2i': {
      const match = ARGON2.exec(digest);
      if (!match || match[1] !== hasher) {
        refuse(hasher, `expected the PHC string $${hasher}$v=19$m=…,t=…,p=…$<salt>$<hash> (unpadded base64).`);
      }
      const [m, t, p] = [Number(match[3]), Number(match[4]), Number(match[5])];
      if (m < 8 || m > LIMITS.argon2MemoryKiB || t < 1 || t > LIMITS.argon2Passes || p < 1 || p > LIMITS.argon2Lanes) {
        refuse(
          hasher,
          `its costs must be m ≤ ${LIMITS.argon2MemoryKiB} KiB, t ≤ ${LIMITS.argon2Passes}, p ≤ ${LIMITS.argon2Lanes} (got m=${m}, t=${t}, p=${p}).`,
        );
      }
      return digest;
    }
    case 'pbkdf2_sha256': {
      const match = PBKDF2.exec(digest);
      if (!match) refuse(hasher, 'expected Django’s pbkdf2_sha256$<iterations>$<salt>$<base64 of 32 bytes>.');
      const iterations = Number(match[1]);
      if (iterations < 1 || iterations > LIMITS.pbkdf2Iterations) {
        refuse(hasher, `its ${iterations} iterations are outside 1 to ${LIMITS.pbkdf2Iterations}.`);
      }
      return digest;
    }
    case 'scrypt_firebase': {
      // Clerk's layout: hash$salt$signerKey$saltSeparator$rounds$memCost (base64, then numbers).
      const parts = digest.split('$');
      if (parts.length !== 6 || !parts.slice(0, 4).every(base64) || !/^\d{1,2}$/.test(parts[4]!) || !/^\d{1,2}$/.test(parts[5]!)) {
        refuse(hasher, 'expected <hash>$<salt>$<signer key>$<salt separator>$<rounds>$<mem cost>, the first four in base64.');
      }
      const [rounds, memCost] = [Number(parts[4]), Number(parts[5])];
      if (rounds < 1 || rounds > LIMITS.firebaseRounds || memCost < 1 || memCost > LIMITS.firebaseMemCost) {
        refuse(hasher, `rounds must be 1 to ${LIMITS.firebaseRounds} and mem cost 1 to ${LIMITS.firebaseMemCost}.`);
      }
      return `${FIREBASE_PREFIX}${digest}`;
    }
  }
}

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (
  password: string | Buffer,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

function equalBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Firebase's scrypt: the derived key encrypts the project's signer key with AES-256-CTR, zero IV. */
async function verifyFirebase(stored: string, password: string): Promise<boolean> {
  const [hash, salt, signerKey, separator, rounds, memCost] = stored.slice(FIREBASE_PREFIX.length).split('$') as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const N = 2 ** Number(memCost);
  const r = Number(rounds);
  const derived = await scryptAsync(
    Buffer.from(password, 'utf8'),
    Buffer.concat([Buffer.from(salt, 'base64'), Buffer.from(separator, 'base64')]),
    64,
    { N, r, p: 1, maxmem: 256 * N * r },
  );
  const cipher = createCipheriv('aes-256-ctr', derived.subarray(0, 32), Buffer.alloc(16));
  const expected = Buffer.concat([cipher.update(Buffer.from(signerKey, 'base64')), cipher.final()]);
  return equalBytes(expected, Buffer.from(hash, 'base64'));
}

/** Django's PBKDF2-HMAC-SHA256: the salt is used as its UTF-8 text. */
async function verifyPbkdf2(stored: string, password: string): Promise<boolean> {
  const [, iterations, salt, hash] = stored.split('$') as [string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const derived = await pbkdf2Async(
    Buffer.from(password, 'utf8'),
    Buffer.from(salt, 'utf8'),
    Number(iterations),
    expected.length,
    'sha256',
  );
  return equalBytes(derived, expected);
}

let bcryptAddon: Promise<typeof import('@node-rs/bcrypt')> | undefined;

/**
 * bcrypt runs on the thread pool, as argon2 does (a wrong-password try at cost 12 is ~0.2 s of CPU).
 * Loaded at the first bcrypt digest, imported or checked: most nodes never meet one, and start-up
 * skips it. A failed load is tried again next time (a 500 each, logged), never taken for a wrong password.
 */
function bcrypt() {
  // require(), not import(): the bundle runs as a script with V8's code cache, where import() has no loader (src/boot/loader.ts).
  bcryptAddon ??= new Promise<typeof import('@node-rs/bcrypt')>((resolve) => resolve(requireLazily('@node-rs/bcrypt'))).catch(
    (error: unknown) => {
      bcryptAddon = undefined;
      throw error;
    },
  );
  return bcryptAddon;
}

/** Loads bcrypt when a digest is imported, so that a platform without its binary fails the import, not the user's first sign-in. */
export async function assertBcryptAvailable(): Promise<void> {
  await bcrypt();
}

/** Verifies a password against any stored hash: argon2 PHC strings, or an imported digest. */
export async function verifyStoredHash(stored: string, password: string): Promise<boolean> {
  // Outside the try: an addon that fails to load is an error on our side (logged), not a wrong password.
  const bcryptVerify = stored.startsWith('$2') ? (await bcrypt()).verify : undefined;
  try {
    if (stored.startsWith('$argon2')) return await verifyArgon2(stored, password);
    if (bcryptVerify) return await bcryptVerify(password, stored);
    if (stored.startsWith('pbkdf2_sha256$')) return await verifyPbkdf2(stored, password);
    if (stored.startsWith(FIREBASE_PREFIX)) return await verifyFirebase(stored, password);
  } catch {
    return false;
  }
  return false;
}

/** Whether a stored hash is anything but this service's own argon2id: rehash it at the next sign-in. */
export function needsRehash(stored: string): boolean {
  // Built on call: passwords.ts imports this module, so its constants are not ready at load.
  const { memoryCost, timeCost, parallelism } = ARGON2_OPTIONS;
  return !stored.startsWith(`$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$`);
}
