import { ACCESS_TOKEN_TTL, type TokenAlgorithm } from '../tenancy/settings.js';

/**
 * When each signing key of an environment signs, and what a rotation changes. Pure rules over the
 * stored times (`activates_at`, `retired_at`, `publish_until`), so every node reaches the same
 * answer from the same rows with its own clock: there is no timer anywhere.
 *
 * A key signs from `activates_at` until `retired_at` (exclusive; null while no successor is
 * scheduled). A rotation publishes the successor at once and makes it sign only after
 * KEY_ACTIVATION_DELAY_MS; the predecessor's `retired_at` is that same instant.
 */

/** Allowed skew between this service's clock and a verifier's, in ms. */
export const CLOCK_SKEW_MS = 5_000;

/**
 * How long a retired key stays published: every token it signed expires within the longest access
 * token lifetime an environment can configure, plus the skew a verifier may allow.
 */
export const RETIRED_KEY_PUBLISH_MS = ACCESS_TOKEN_TTL.max * 1000 + CLOCK_SKEW_MS;

/** How long verifiers may cache the JWKS and discovery responses: their Cache-Control max-age. */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * The least time a common verifier waits between two JWKS fetches: jose's createRemoteJWKSet
 * (`cooldownDuration`) and @gatehouse/backend both let an unknown kid cause a fetch only once 30 s
 * have passed since the previous one.
 */
export const VERIFIER_COOLDOWN_MS = 30_000;

/**
 * Slack on top: node clocks may differ by the skew allowed above (5 s); a JWKS response read just
 * before a key was published can reach a verifier or an HTTP cache a little later, and its max-age
 * counts from then (caches also round `Age` to whole seconds); a fetch may take up to jose's 5 s
 * timeout. 30 s covers these several times over and makes the whole delay a round 6 minutes.
 */
export const ACTIVATION_MARGIN_MS = 30_000;

/**
 * From the publication of a rotated key to its first signature. By then every verifier holds a
 * JWKS with it (any copy without it is older than max-age) or may fetch again on meeting its kid
 * (the cooldown that began at its last fetch has passed), so no valid token is refused.
 */
export const KEY_ACTIVATION_DELAY_MS = JWKS_MAX_AGE_SECONDS * 1000 + VERIFIER_COOLDOWN_MS + ACTIVATION_MARGIN_MS;

export interface ScheduledKey {
  id: string;
  algorithm: string;
  activates_at: number;
  retired_at: number | null;
}

export type SigningKeyState = 'pending' | 'active' | 'retired';

/**
 * `pending`: published, signs from `activatesAt`. `active`: signs now. `retired`: signs no more
 * (or never did, when a newer rotation replaced it before it activated) and stays published until
 * its tokens have expired.
 */
export function keyState(key: ScheduledKey, now: number): SigningKeyState {
  if (key.retired_at !== null && key.retired_at <= now) return 'retired';
  return key.activates_at > now ? 'pending' : 'active';
}

/** The live keys (not retired at `now`), split into the one signing now and its scheduled successor. */
export function splitLive<K extends ScheduledKey>(live: readonly K[], now: number): { active?: K; pending?: K } {
  let active: K | undefined;
  let pending: K | undefined;
  for (const key of live) {
    if (keyState(key, now) === 'pending') pending = key;
    else if (keyState(key, now) === 'active' && (!active || key.activates_at > active.activates_at)) active = key;
  }
  return { ...(active ? { active } : {}), ...(pending ? { pending } : {}) };
}

/**
 * `use`: whatever signing a token needs (the first key; a staged change of `tokenAlgorithm`).
 * `rotate`: a staged rotation. `rotate-now`: the emergency rotation, signing at once.
 */
export type RotationIntent = 'use' | 'rotate' | 'rotate-now';

/**
 * `none`: nothing to change. `immediate`: a new key signs now (the first key of an environment, or
 * an emergency). `schedule`: a new key is published now and signs after the delay, replacing any
 * pending one. `cancel`: drop the pending key, because the algorithm went back to the active key's.
 */
export type RotationPlan = 'none' | 'immediate' | 'schedule' | 'cancel';

export function planRotation(
  intent: RotationIntent,
  live: { active?: ScheduledKey; pending?: ScheduledKey },
  algorithm: TokenAlgorithm,
): RotationPlan {
  const { active, pending } = live;
  // With no key signing yet, nobody can have cached a JWKS without the new one: sign at once.
  if (intent === 'rotate-now' || !active) return 'immediate';
  // A second rotation while one is pending keeps it: a replacement would restart the delay.
  if (pending?.algorithm === algorithm) return 'none';
  if (intent === 'rotate' || active.algorithm !== algorithm) return 'schedule';
  return pending ? 'cancel' : 'none';
}
