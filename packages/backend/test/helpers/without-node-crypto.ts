import { beforeAll } from 'vitest';

/**
 * Setup of the `backend-webcrypto` project: node:crypto is hidden from @gatehouse/backend, as on the
 * Edge runtime, so the same verification, cooldown and single-flight tests run on WebCrypto. The
 * tests' own helpers still sign with node:crypto (they import it statically).
 */
const original = process.getBuiltinModule;
process.getBuiltinModule = ((id: string) =>
  id === 'node:crypto' || id === 'crypto' ? undefined : original.call(process, id)) as typeof process.getBuiltinModule;

beforeAll(async () => {
  const { cryptoRuntime } = await import('../../src/runtime.js');
  if (cryptoRuntime() !== 'webcrypto') throw new Error('backend-webcrypto: node:crypto is still visible to @gatehouse/backend.');
});
