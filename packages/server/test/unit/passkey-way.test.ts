import { describe, expect, it } from 'vitest';
import { PasskeyWay, type PasskeyWayOptions } from '../../src/auth/passkey.js';
import { ApiError } from '../../src/lib/errors.js';
import type { Environment } from '../../src/tenancy/settings.js';

/**
 * PasskeyWay.verify after the door refused: the attempt is spent again on its own, and a failure of
 * that (the database gone for a moment) is logged, never answered in place of the refusal.
 */
describe('PasskeyWay: a refused sign-in whose attempt cannot be recorded as spent', () => {
  const environment = { id: 'env_a', settings: { authMethods: { passkey: true } } } as unknown as Environment;
  const challenge = { attemptId: 'pka_x', challenge: 'c', rpId: 'localhost', expiresAt: Date.now() + 60_000 };
  const refusal = new ApiError('user_banned', 'This account is banned.');

  function way(spend: () => Promise<void>) {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const ceremonies = {
      verifySignIn: async () => ({ userId: 'user_1', passkeyId: 'pk_1', challenge, proofWrites: { writes: [], refusal: () => refusal } }),
      spendSignIn: spend,
    } as unknown as PasskeyWayOptions['ceremonies'];
    const door = {
      completeSignIn: async () => {
        throw refusal;
      },
    } as unknown as PasskeyWayOptions['door'];
    const log = { warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }) };
    return { way: new PasskeyWay({ ceremonies, door, log: log as unknown as PasskeyWayOptions['log'] }), warnings };
  }

  const input = { attemptId: 'pka_x', response: {} as never };
  const context = { userAgent: undefined } as never;

  it('answers the refusal and logs the failure to spend', async () => {
    const lost = new Error('SQLITE_IOERR: disk I/O error');
    const { way: passkey, warnings } = way(() => Promise.reject(lost));
    await expect(passkey.verify(environment, input, context)).rejects.toBe(refusal);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toBe('could not record a refused passkey sign-in as spent');
    expect(warnings[0]!.fields).toMatchObject({ err: lost, environmentId: 'env_a' });
  });

  it('logs nothing when the attempt is recorded as spent', async () => {
    let spent = 0;
    const { way: passkey, warnings } = way(async () => {
      spent++;
    });
    await expect(passkey.verify(environment, input, context)).rejects.toBe(refusal);
    expect(spent).toBe(1);
    expect(warnings).toHaveLength(0);
  });
});
