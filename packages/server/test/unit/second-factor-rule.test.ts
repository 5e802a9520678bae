import { describe, expect, it } from 'vitest';
import { secondFactorRule } from '../../src/auth/door.js';

/** The door's decision (DESIGN "One door to a session"), without a server: the whole rule in one place. */
describe("the door's second-factor rule", () => {
  const has =
    (...factors: ('totp' | 'backup_code' | 'passkey')[]) =>
    async () =>
      factors;
  const unread = async (): Promise<never> => {
    throw new Error('the user’s factors should not be read');
  };

  it('asks a user who has a second factor for it, listing theirs', async () => {
    expect(await secondFactorRule('optional', ['pwd'], has('totp', 'backup_code'))).toEqual({
      status: 'needs_second_factor',
      factors: ['totp', 'backup_code'],
    });
    expect(await secondFactorRule('required', ['email'], has('totp'))).toEqual({ status: 'needs_second_factor', factors: ['totp'] });
  });

  it('under "required", asks a user without one to set one up; under "optional", starts the session', async () => {
    expect(await secondFactorRule('required', ['sso'], has())).toEqual({
      status: 'needs_second_factor_setup',
      factors: ['totp', 'passkey'],
    });
    expect(await secondFactorRule('optional', ['pwd'], has())).toBeUndefined();
  });

  it('asks nothing under "off", even of a user with TOTP, without reading their factors', async () => {
    expect(await secondFactorRule('off', ['pwd'], unread)).toBeUndefined();
  });

  it('a first factor that satisfies MFA by itself (handoff, passkey, actor) skips the second, even under "required"', async () => {
    for (const first of ['handoff', 'passkey', 'actor']) expect(await secondFactorRule('required', [first], unread)).toBeUndefined();
  });
});
