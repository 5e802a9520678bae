/**
 * What a session verified (docs/mfa.md): its `amr` (the factors, unique, in the order they were
 * verified) and when it last verified a first and a second factor, which become the access
 * token's `amr` and `fva` claims and which reverification reads.
 */

export const FIRST_FACTORS = ['pwd', 'email', 'sso', 'passkey', 'actor'] as const;
export const SECOND_FACTORS = ['totp', 'backup_code'] as const;
export type Amr = (typeof FIRST_FACTORS)[number] | (typeof SECOND_FACTORS)[number];

/** The session columns these live in. */
export interface SessionFactors {
  amr: string;
  first_factor_at: number | null;
  second_factor_at: number | null;
  /**
   * Who acts, in an impersonated session (`act.sub`; docs/impersonation.md): it rides with the
   * factors so that refreshes and hosted handoffs carry it, with the one-hour limit counted from
   * `first_factor_at`. Absent or null for every other session.
   */
  actor?: string | null;
}

/** An impersonated session lives at most this long after its actor token was redeemed. */
export const ACTOR_SESSION_MAX_MS = 3_600_000;

/** When an impersonated session must end (an hour after its actor token was redeemed), else undefined. */
export function actorSessionEnd(factors: Pick<SessionFactors, 'actor' | 'first_factor_at'>, now: number): number | undefined {
  return factors.actor ? (factors.first_factor_at ?? now) + ACTOR_SESSION_MAX_MS : undefined;
}

/** A session's factors; one from before migration 0030 verified its first factor when it started. */
export function factorsOf(row: SessionFactors & { created_at: number }): SessionFactors {
  return {
    amr: row.amr,
    first_factor_at: row.first_factor_at ?? row.created_at,
    second_factor_at: row.second_factor_at,
    actor: row.actor ?? null,
  };
}

/** What a sign-in verified: the factors, in order (`pwd` for a password…), stamped now; the second-factor time only when one is among them. */
export function verifiedNow(amr: readonly Amr[], now: number): SessionFactors {
  const unique = [...new Set(amr)];
  return {
    amr: JSON.stringify(unique),
    first_factor_at: now,
    second_factor_at: unique.some((f) => verifiesSecondFactor(f)) ? now : null,
  };
}

/**
 * Whether verifying `factor` counts as a second factor: the second factors, and a passkey, which
 * verifies the user (possession and PIN or biometrics) and so satisfies MFA by itself.
 */
export function verifiesSecondFactor(factor: string): boolean {
  return factor === 'passkey' || (SECOND_FACTORS as readonly string[]).includes(factor);
}

/** The session's `amr` column read back; anything unexpected reads as none. */
export function parseAmr(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/** The list with `factor` added at the end, unless it is there already. */
export function withFactor(amr: readonly string[], factor: Amr): string[] {
  return amr.includes(factor) ? [...amr] : [...amr, factor];
}

/** Whole minutes since `at`, or -1 when never (Clerk's `fva`). */
function minutesSince(now: number, at: number | null): number {
  return at === null ? -1 : Math.max(0, Math.floor((now - at) / 60_000));
}

/** The `amr` and `fva` claims of a token issued now for a session with these factors. */
export function factorClaims(factors: SessionFactors, now: number): { amr: string[]; fva: [number, number]; act?: { sub: string } } {
  return {
    amr: parseAmr(factors.amr),
    fva: [minutesSince(now, factors.first_factor_at), minutesSince(now, factors.second_factor_at)],
    ...(factors.actor ? { act: { sub: factors.actor } } : {}),
  };
}
