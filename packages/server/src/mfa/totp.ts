import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
export { base32Decode, base32Encode } from '../lib/base32.js';

/**
 * TOTP (RFC 6238 over RFC 4226's HOTP) as authenticator apps use it: HMAC-SHA-1, 6 digits, 30 s
 * steps, one step of clock drift either way.
 */

export const STEP_SECONDS = 30;
export const DIGITS = 6;
/** 160 bits, RFC 4226's recommended secret length. */
const SECRET_BYTES = 20;

export function newTotpSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

/** HOTP (RFC 4226 §5.3) of `counter`, `digits` long, with RFC 6238's hash choices. */
export function hotp(secret: Uint8Array, counter: number, digits = DIGITS, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, secret).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The time step of an instant in milliseconds. */
export function timeStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / STEP_SECONDS);
}

/**
 * The step `code` is right for, among the current one and one either side, if that step is later
 * than `lastStep` (RFC 6238 §5.2: a code is accepted once); undefined otherwise. All three are
 * computed and compared in constant time whatever matches.
 */
export function acceptedStep(secret: Uint8Array, code: string, nowMs: number, lastStep: number | null): number | undefined {
  const presented = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(presented)) return undefined;
  const current = timeStep(nowMs);
  let accepted: number | undefined;
  for (const step of [current - 1, current, current + 1]) {
    const matches = timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(presented));
    if (matches && accepted === undefined && (lastStep === null || step > lastStep)) accepted = step;
  }
  return accepted;
}

/** The `otpauth://` URL an authenticator app scans (Key Uri Format): label `{issuer}:{account}`. */
export function otpauthUrl(issuer: string, account: string, secretBase32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return `otpauth://totp/${label}?secret=${secretBase32}&issuer=${encodeURIComponent(issuer)}`;
}
