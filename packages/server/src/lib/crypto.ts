import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * CSPRNG bytes drawn 4 KiB at a time and each handed out once, as Node's randomUUID keeps its own
 * cache: a `randomBytes` call costs ~7 µs whatever its size, and a sign-in needs half a dozen small
 * values (ids, a refresh token, a challenge). Bytes handed out are wiped from the pool.
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolUsed = 0;

/** `size` fresh CSPRNG bytes (at most 256; larger values call randomBytes directly). */
export function randomPart(size: number): Buffer {
  if (size > 256) return randomBytes(size);
  if (poolUsed + size > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolUsed = 0;
  }
  const part = Buffer.from(pool.subarray(poolUsed, poolUsed + size));
  pool.fill(0, poolUsed, poolUsed + size);
  poolUsed += size;
  return part;
}

/** `size` fresh CSPRNG bytes, base64url-encoded. */
export function randomText(size: number): string {
  return randomPart(size).toString('base64url');
}

/** The random parts handed out in the current millisecond, per prefix and environment. */
const idsThisMillisecond = new Map<string, Buffer>();
let idMillisecond = -1;

/**
 * `prefix_` + 10 chars of millisecond time + 16 chars (80 bits) of randomness, like a ULID. Ids sort
 * by creation time, which keeps cursor pagination and index inserts cheap. Within one millisecond
 * (or while the clock is behind, after stepping back) an id of the same prefix and environment is the
 * previous one plus 1, so what one process creates in a burst lists in exactly that order. The count
 * is kept per environment (`environmentId`), so the step between two of a tenant's ids never counts
 * another tenant's. Ids are names, never secrets: every capability (refresh tokens, flow secrets,
 * keys) is a separate random value.
 */
export function newId(prefix: string, environmentId = ''): string {
  let time = Date.now();
  if (time > idMillisecond) {
    idMillisecond = time;
    idsThisMillisecond.clear();
  }
  time = idMillisecond;
  const scope = `${prefix}\u0000${environmentId}`;
  let random = idsThisMillisecond.get(scope);
  if (random === undefined || !incrementInPlace(random)) {
    if (random !== undefined) {
      // 2^80 ids in one millisecond have run out: borrow the next one.
      idMillisecond = time = time + 1;
      idsThisMillisecond.clear();
    }
    random = randomPart(10);
    idsThisMillisecond.set(scope, random);
  }
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = CROCKFORD[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  return `${prefix}_${timePart}${base32(random)}`;
}

/** Adds 1 to a big-endian number; false when it overflowed (it is then all zeros). */
function incrementInPlace(bytes: Buffer): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    bytes[i] = (bytes[i]! + 1) & 0xff;
    if (bytes[i] !== 0) return true;
  }
  return false;
}

/** A bearer secret: the prefix plus `bytes` of CSPRNG output, base64url-encoded. */
export function newSecret(prefix: string, bytes = 32): string {
  return prefix + randomText(bytes);
}

export function sha256Hex(value: string | Uint8Array): string {
  // One-shot: a third of createHash's cost for the short values hashed here.
  return hash('sha256', value, 'hex');
}

/** Constant-time equality of two strings, whatever their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  // Hashing first gives equal-length inputs, so the length check leaks nothing.
  const ha = hash('sha256', a, 'buffer');
  const hb = hash('sha256', b, 'buffer');
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
