import { createHmac } from 'node:crypto';

/** RFC 4648 base32, as the otpauth secret is written. */
function base32Bytes(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of text.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/**
 * What an authenticator app shows (RFC 6238: HMAC-SHA-1, 6 digits, 30 s), written here apart from the
 * server's own code so that the two must agree. `offset` moves by steps (the server allows one).
 */
export function totp(secret: string, nowMs = Date.now(), offset = 0): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(nowMs / 30_000) + offset));
  const mac = createHmac('sha1', base32Bytes(secret)).update(counter).digest();
  const at = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
