import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** The bcrypt addon is loaded at the first bcrypt digest (identity/password-digests.ts). */
describe('imported bcrypt digests', () => {
  afterEach(() => {
    vi.doUnmock('../../src/lib/lazy.js');
    vi.resetModules();
  });

  it('an addon that fails to load is an error, never a wrong password, and is loaded again at the next try', async () => {
    const digest = bcrypt.hashSync('correct horse', 4);
    let loads = 0;
    vi.resetModules();
    vi.doMock('../../src/lib/lazy.js', async (importOriginal) => {
      const { requireLazily } = await importOriginal<typeof import('../../src/lib/lazy.js')>();
      const failingOnce = (id: string) => {
        if (id === '@node-rs/bcrypt' && ++loads === 1) throw new Error('no binary for this platform');
        return requireLazily(id);
      };
      return { requireLazily: failingOnce };
    });
    const { assertBcryptAvailable, verifyStoredHash } = await import('../../src/identity/password-digests.js');
    await expect(verifyStoredHash(digest, 'correct horse')).rejects.toThrow('no binary for this platform');
    await expect(assertBcryptAvailable()).resolves.toBeUndefined();
    expect(loads).toBe(2);
    expect(await verifyStoredHash(digest, 'correct horse')).toBe(true);
    expect(await verifyStoredHash(digest, 'wrong horse')).toBe(false);
  });
});
