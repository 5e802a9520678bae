import { describe, expect, it } from 'vitest';
import { backupCodeHash, newBackupCodes, normalizeBackupCode } from '../../src/mfa/backup-codes.js';
import { acceptedStep, base32Decode, base32Encode, hotp, otpauthUrl, timeStep } from '../../src/mfa/totp.js';

// RFC 6238 Appendix B: the seeds are the ASCII strings, 8-digit codes, per hash.
const SEEDS = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};
const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it('computes the RFC 6238 test vectors', () => {
    for (const [seconds, sha1, sha256, sha512] of VECTORS) {
      const step = timeStep(seconds * 1000);
      expect(hotp(SEEDS.sha1, step, 8, 'sha1')).toBe(sha1);
      expect(hotp(SEEDS.sha256, step, 8, 'sha256')).toBe(sha256);
      expect(hotp(SEEDS.sha512, step, 8, 'sha512')).toBe(sha512);
    }
  });

  it('gives the 6-digit codes authenticator apps show (the last six of the 8-digit ones)', () => {
    expect(hotp(SEEDS.sha1, timeStep(59_000))).toBe('287082');
    expect(hotp(SEEDS.sha1, timeStep(1111111109_000))).toBe('081804');
  });

  it('round-trips RFC 4648 base32, ignoring case, spaces and padding', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('mzxw 6ytb oi======')!.toString()).toBe('foobar');
    expect(base32Decode('MZXW1')).toBeUndefined();
    const secret = Buffer.from('12345678901234567890');
    expect(base32Decode(base32Encode(secret))).toEqual(secret);
  });

  it('accepts one step of drift either way, and only steps after the last accepted one', () => {
    const now = 1_700_000_000_000;
    const step = timeStep(now);
    const code = (offset: number) => hotp(SEEDS.sha1, step + offset);
    expect(acceptedStep(SEEDS.sha1, code(0), now, null)).toBe(step);
    expect(acceptedStep(SEEDS.sha1, code(-1), now, null)).toBe(step - 1);
    expect(acceptedStep(SEEDS.sha1, code(1), now, null)).toBe(step + 1);
    expect(acceptedStep(SEEDS.sha1, code(2), now, null)).toBeUndefined();
    expect(acceptedStep(SEEDS.sha1, code(-2), now, null)).toBeUndefined();
    // Replay: the step was accepted already.
    expect(acceptedStep(SEEDS.sha1, code(0), now, step)).toBeUndefined();
    expect(acceptedStep(SEEDS.sha1, code(1), now, step)).toBe(step + 1);
    expect(acceptedStep(SEEDS.sha1, 'abcdef', now, null)).toBeUndefined();
    expect(acceptedStep(SEEDS.sha1, `${code(0)}0`, now, null)).toBeUndefined();
  });

  it('builds the otpauth URL authenticator apps scan', () => {
    expect(otpauthUrl('Acme Co', 'ada@example.com', 'MZXW6YTBOI')).toBe(
      'otpauth://totp/Acme%20Co:ada%40example.com?secret=MZXW6YTBOI&issuer=Acme%20Co',
    );
  });
});

describe('backup codes', () => {
  it('are 10 distinct codes of 10 characters from [a-z0-9]', () => {
    const codes = newBackupCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z0-9]{10}$/);
  });

  it('compare without case, "-" or spaces, and hash per user', () => {
    const key = Buffer.alloc(32, 7);
    expect(normalizeBackupCode(' AbC-de 12345 ')).toBe('abcde12345');
    expect(backupCodeHash(key, 'env_a', 'user_a', 'ABCDE-12345')).toBe(backupCodeHash(key, 'env_a', 'user_a', 'abcde12345'));
    expect(backupCodeHash(key, 'env_a', 'user_a', 'abcde12345')).not.toBe(backupCodeHash(key, 'env_a', 'user_b', 'abcde12345'));
  });
});
