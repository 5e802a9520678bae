import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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

let lastIdTime = -1;
const lastIdRandom = Buffer.alloc(10);

/**
 * `prefix_` + 10 chars of millisecond time + 16 chars (80 bits) of randomness, like a ULID. Ids sort
 * by creation time, which keeps cursor pagination and index inserts cheap. Within one millisecond
 * (or if the clock steps back) the random part is the previous one plus 1, so ids made by one process
 * sort in the order it made them, and "newest first" lists are exact. Ids are names, never secrets:
 * every capability (refresh tokens, flow secrets, keys) is a separate random value.
 */
export function newId(prefix: string): string {
  let time = Date.now();
  if (time <= lastIdTime && incrementInPlace(lastIdRandom)) {
    time = lastIdTime;
  } else {
    time = Math.max(time, lastIdTime + 1);
    randomBytes(10).copy(lastIdRandom);
  }
  lastIdTime = time;
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = CROCKFORD[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  return `${prefix}_${timePart}${base32(lastIdRandom)}`;
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
  return prefix + randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time equality of two strings, whatever their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  // Hashing first gives equal-length inputs, so the length check leaks nothing.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
