/**
 * The numbers of sign-in throttling (docs/rate-limits.md explains each choice).
 *
 * A policy counts attempts per subject (an account's address, or a client address) within one
 * environment. Every attempt counts when it starts; one that turns out not to be a credential
 * failure is given back (`undo`) or wipes the subject's record (`clear`). The `free`-th counted
 * attempt and every later one start a lock of `baseLockMs × 2^(n − free)`, at most `maxLockMs`,
 * during which the subject's attempts are refused unexamined: `free` failures in a row, then a wait. The record is forgotten `windowMs`
 * after its last attempt. A policy with `baseLockMs: 0` only counts: the caller reads the count.
 */
export interface ThrottlePolicy {
  /** Part of the storage key: short, stable, unique among policies. */
  readonly name: string;
  readonly free: number;
  readonly baseLockMs: number;
  readonly maxLockMs: number;
  readonly windowMs: number;
  /** What an attempt that was not a credential failure does to the record. */
  readonly onSuccess: 'clear' | 'undo';
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** POST /v1/auth/signin, per account: a lock only ever blocks the password, never the emailed methods. */
export const PASSWORD_ACCOUNT: ThrottlePolicy = {
  name: 'pw-acct',
  free: 5,
  baseLockMs: MINUTE,
  maxLockMs: 15 * MINUTE,
  windowMs: HOUR,
  onSuccess: 'clear',
};

/** POST /v1/auth/signin, per client address, whatever the account (credential stuffing). */
export const PASSWORD_CLIENT: ThrottlePolicy = {
  name: 'pw-ip',
  free: 20,
  baseLockMs: MINUTE,
  maxLockMs: 15 * MINUTE,
  windowMs: HOUR,
  // A right password for one's own account must not wipe the guesses made at other accounts.
  onSuccess: 'undo',
};

/**
 * Email-code verification, per account: never a lock, since anyone can send wrong codes for any
 * address and a lock would keep the owner from using a fresh code. Past `free` wrong codes in the
 * window, each code accepts one try instead of five: the owner, who has the code, still gets in.
 */
export const EMAIL_CODE_ACCOUNT: ThrottlePolicy = {
  name: 'code-acct',
  free: 10,
  baseLockMs: 0,
  maxLockMs: 0,
  windowMs: 24 * HOUR,
  onSuccess: 'clear',
};

/** Email-code verification, per client address: carries the brute-force defence with the per-code limit. */
export const EMAIL_CODE_CLIENT: ThrottlePolicy = {
  name: 'code-ip',
  free: 10,
  baseLockMs: MINUTE,
  maxLockMs: 15 * MINUTE,
  windowMs: HOUR,
  onSuccess: 'undo',
};

/**
 * Password-reset completion, per client address. A reset token is a 256-bit secret and an invalid
 * one names no account, so there is nothing to count per account; this stops token scanning.
 */
export const RESET_CLIENT: ThrottlePolicy = {
  name: 'reset-ip',
  free: 10,
  baseLockMs: MINUTE,
  maxLockMs: 15 * MINUTE,
  windowMs: HOUR,
  onSuccess: 'undo',
};

/**
 * Sign-up verification (`POST /v1/auth/signup/verify`, not built yet) follows the email code's
 * rules: the same two policies under their own names, per sign-up address and per client address.
 */
export const SIGN_UP_VERIFICATION_ACCOUNT: ThrottlePolicy = { ...EMAIL_CODE_ACCOUNT, name: 'signup-acct' };
export const SIGN_UP_VERIFICATION_CLIENT: ThrottlePolicy = { ...EMAIL_CODE_CLIENT, name: 'signup-ip' };

/**
 * Domain verification codes (`POST /v1/me/organization/domains/{id}/verify`), per client address:
 * the email code's lock, so one client cannot spread guesses over many organizations.
 */
export const DOMAIN_CODE_CLIENT: ThrottlePolicy = { ...EMAIL_CODE_CLIENT, name: 'domain-ip' };

/**
 * Domain verification codes, per domain name, whatever the organization and across deleting and
 * re-adding it: never a lock (anyone may add anyone's domain to an organization of their own and
 * guess), but past one code's worth of wrong tries in a day, each new code takes one try.
 */
export const DOMAIN_CODE_NAME: ThrottlePolicy = { ...EMAIL_CODE_ACCOUNT, name: 'domain-name', free: 5 };

/**
 * Second-factor codes (TOTP and backup codes, at sign-in, reverification and enrolment), per user:
 * past 10 wrong codes every try is refused unexamined for 15 minutes. A right code is given back;
 * the wrong ones stay counted for their 15 minutes.
 */
export const SECOND_FACTOR_USER: ThrottlePolicy = {
  name: 'mfa-user',
  free: 10,
  baseLockMs: 15 * MINUTE,
  maxLockMs: 15 * MINUTE,
  windowMs: 15 * MINUTE,
  onSuccess: 'undo',
};

/** The lock a policy sets on the attempt that brings its count to `count`; 0 for none. */
export function lockMs(policy: ThrottlePolicy, count: number): number {
  if (policy.baseLockMs <= 0 || count < policy.free) return 0;
  const doublings = Math.min(count - policy.free, 30);
  return Math.min(policy.maxLockMs, policy.baseLockMs * 2 ** doublings);
}

/** Whether a count-only policy is past its free allowance (the attempt after the `free`-th). */
export function overAllowance(policy: ThrottlePolicy, count: number): boolean {
  return count > policy.free;
}
