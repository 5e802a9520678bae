import bcrypt from 'bcryptjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * Imported accounts must not be told apart by how long a wrong password takes (identity/passwords.ts).
 * No timing is measured: the real argon2 and bcrypt calls are wrapped and counted, and every failure
 * must make the same ones, whatever the stored hasher.
 */
describe('password check work, whatever the stored hasher', () => {
  const calls = { argon2: 0, bcrypt: 0 };
  let passwords: typeof import('../../src/identity/passwords.js');

  beforeEach(async () => {
    calls.argon2 = 0;
    calls.bcrypt = 0;
    vi.resetModules();
    vi.doMock('@node-rs/argon2', async (importOriginal) => {
      const real = await importOriginal<typeof import('@node-rs/argon2')>();
      return {
        ...real,
        verify: (...args: Parameters<typeof real.verify>) => {
          calls.argon2 += 1;
          return real.verify(...args);
        },
      };
    });
    vi.doMock('../../src/lib/lazy.js', async (importOriginal) => {
      const { requireLazily } = await importOriginal<typeof import('../../src/lib/lazy.js')>();
      return {
        requireLazily: (id: string) => {
          const loaded = requireLazily(id) as typeof import('@node-rs/bcrypt');
          if (id !== '@node-rs/bcrypt') return loaded;
          return {
            ...loaded,
            verify: (...args: Parameters<typeof loaded.verify>) => {
              calls.bcrypt += 1;
              return loaded.verify(...args);
            },
          };
        },
      };
    });
    passwords = await import('../../src/identity/passwords.js');
  });
  afterEach(() => {
    vi.doUnmock('@node-rs/argon2');
    vi.doUnmock('../../src/lib/lazy.js');
    vi.resetModules();
  });

  const imported = bcrypt.hashSync('the old password', 4);
  const work = async (check: () => Promise<boolean>) => {
    calls.argon2 = 0;
    calls.bcrypt = 0;
    expect(await check()).toBe(false);
    return { ...calls };
  };

  it('imported-account timing: a wrong password against an imported bcrypt digest also spends an argon2 verification', async () => {
    const { verifyPassword } = passwords;
    expect(await work(() => verifyPassword(imported, 'a wrong guess', 'env_a'))).toEqual({ argon2: 1, bcrypt: 1 });
  });

  it('imported-account timing: a wrong password against a native hash, or an unknown user, spends the same bcrypt and argon2 work', async () => {
    const { hashPassword, verifyPassword } = passwords;
    const native = await hashPassword('the new password');
    // The environment's imported format is learnt from the first imported digest checked there.
    await verifyPassword(imported, 'a wrong guess', 'env_b');
    const legacy = await work(() => verifyPassword(imported, 'a wrong guess', 'env_b'));
    expect(await work(() => verifyPassword(native, 'a wrong guess', 'env_b'))).toEqual(legacy);
    expect(await work(() => verifyPassword(undefined, 'a wrong guess', 'env_b'))).toEqual(legacy);
    expect(await work(() => verifyPassword(null, 'a wrong guess', 'env_b'))).toEqual(legacy);
  });

  it('an environment without imported digests pays argon2 only, and the right password still passes', async () => {
    const { hashPassword, verifyPassword } = passwords;
    const native = await hashPassword('the new password');
    expect(await work(() => verifyPassword(native, 'a wrong guess', 'env_c'))).toEqual({ argon2: 1, bcrypt: 0 });
    expect(await verifyPassword(native, 'the new password', 'env_c')).toBe(true);
    expect(await verifyPassword(imported, 'the old password', 'env_c')).toBe(true);
  });
});
