import { TokenVerificationError } from './errors.js';
import { importJwk, type Jwk, type VerificationKey } from './keys.js';

/** After an unknown `kid` causes a refetch, no other refetch for an unknown kid for this long. */
export const KID_REFETCH_COOLDOWN_MS = 30_000;
/** Known keys are re-read in the background this often, so a key the server stops publishing ages out. */
export const JWKS_REFRESH_MS = 60 * 60_000;
/** After a failed fetch, no fetch for this issuer (first load or background re-read) for this long. */
export const JWKS_FAILURE_BACKOFF_MS = 30_000;
export const DEFAULT_JWKS_TIMEOUT_MS = 5_000;
/** A JWKS bigger than this is not one Gatehouse published. */
const MAX_JWKS_BYTES = 256 * 1024;

/**
 * The keys of one JWKS URL (one issuer), shared by every verification in the process.
 *
 * - The first load fetches at once and does not start the cooldown.
 * - Later, a `kid` that is not in the cache refetches at once and starts a 30 s cooldown; during it a
 *   token with an unknown kid is refused at once (`jwk-kid-mismatch`): no fetch, no waiting. So a
 *   flood of forged kids costs one fetch per 30 s, and a rotation is still picked up at once.
 * - One fetch is in flight at a time; concurrent verifications wait for that one.
 * - A failed fetch is `jwks-unavailable` for the tokens that needed it; keys already known keep working.
 * - After a failed fetch, the first load and the hourly background re-read wait 30 s before trying
 *   again: meanwhile a first load is refused at once (`jwks-unavailable`) and cached keys keep being
 *   served, so a down endpoint costs one fetch per 30 s, not one per token. (The unknown-kid
 *   refetch keeps its own 30 s cooldown above.)
 */
export class JwksCache {
  private keys: Map<string, VerificationKey> | undefined;
  private loadedAt = 0;
  private cooldownStartedAt: number | undefined;
  private failedAt: number | undefined;
  private failure = '';
  private inFlight: Promise<void> | undefined;
  private timeoutMs = DEFAULT_JWKS_TIMEOUT_MS;
  /** How many fetches were started (for tests and diagnostics). */
  fetches = 0;

  constructor(readonly url: string) {}

  /** Resolves once no fetch is in flight, whatever its outcome (a background re-read included). */
  async settled(): Promise<void> {
    while (this.inFlight) await this.inFlight.catch(() => undefined);
  }

  /** The key `kid` when it is cached: the hot path, with no promise. */
  cached(kid: string): VerificationKey | undefined {
    const known = this.keys?.get(kid);
    if (known && Date.now() - this.loadedAt > JWKS_REFRESH_MS && !this.inFlight && !this.backingOff()) {
      this.load().catch(() => {});
    }
    return known;
  }

  /** The key `kid`, fetching the JWKS when the rules above allow. */
  async key(kid: string, timeoutMs = DEFAULT_JWKS_TIMEOUT_MS): Promise<VerificationKey> {
    this.timeoutMs = timeoutMs;
    const known = this.cached(kid);
    if (known) return known;
    if (this.inFlight) {
      await this.settle(this.inFlight);
    } else if (this.keys === undefined) {
      if (this.backingOff()) throw this.unavailable(`${this.failure} (retried at most every 30 s)`);
      await this.settle(this.load());
    } else {
      const now = Date.now();
      if (this.cooldownStartedAt !== undefined && now - this.cooldownStartedAt < KID_REFETCH_COOLDOWN_MS) {
        throw kidMismatch(kid, this.url, 'and the key set was re-read less than 30 s ago');
      }
      this.cooldownStartedAt = now;
      await this.settle(this.load());
    }
    const found = this.keys?.get(kid);
    if (!found) throw kidMismatch(kid, this.url, 'even after re-reading the key set');
    return found;
  }

  /** Waits for a fetch; its failure is jwks-unavailable for the token that needed it. */
  private async settle(loading: Promise<void>): Promise<void> {
    try {
      await loading;
    } catch (error) {
      throw this.unavailable((error as Error).message);
    }
  }

  private backingOff(): boolean {
    return this.failedAt !== undefined && Date.now() - this.failedAt < JWKS_FAILURE_BACKOFF_MS;
  }

  private unavailable(why: string): TokenVerificationError {
    return new TokenVerificationError(
      'jwks-unavailable',
      `Could not read the signing keys from ${this.url}: ${why}. Check that the issuer (or jwksUrl) is right and Gatehouse is reachable, or pass jwtKey to verify without a network.`,
    );
  }

  private load(): Promise<void> {
    this.fetches += 1;
    const loading = this.fetchKeys()
      .then((keys) => {
        this.keys = keys;
        this.loadedAt = Date.now();
        this.failedAt = undefined;
      })
      .catch((error: unknown) => {
        this.failedAt = Date.now();
        this.failure = (error as Error).message;
        throw error;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    this.inFlight = loading;
    return loading;
  }

  private async fetchKeys(): Promise<Map<string, VerificationKey>> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new Error(`no answer within ${this.timeoutMs} ms`);
      throw new Error(
        `the request failed (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message})`,
      );
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`HTTP ${response.status}`);
    }
    const text = await response.text();
    if (text.length > MAX_JWKS_BYTES) throw new Error('the answer is too large to be a key set');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('the answer is not JSON');
    }
    const list = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list)) throw new Error('the answer has no "keys" array');
    const keys = new Map<string, VerificationKey>();
    for (const jwk of list as Jwk[]) {
      if (typeof jwk?.kid !== 'string') continue;
      try {
        const key = importJwk(jwk);
        keys.set(jwk.kid, 'then' in key ? await key : key);
      } catch {
        // A key this library cannot use (another type, HMAC, bad members) never verifies anything.
      }
    }
    return keys;
  }
}

function kidMismatch(kid: string, url: string, why: string): TokenVerificationError {
  return new TokenVerificationError(
    'jwk-kid-mismatch',
    `No signing key "${kid}" is published at ${url} ${why}. The token was not signed by this issuer, or its key was retired; check the issuer option.`,
  );
}

const caches = new Map<string, JwksCache>();

/** The process-wide cache of one JWKS URL. */
export function jwksCacheFor(url: string): JwksCache {
  let cache = caches.get(url);
  if (!cache) {
    cache = new JwksCache(url);
    caches.set(url, cache);
  }
  return cache;
}

/** The last issuer's cache: every request of an app names the same issuer, so its URL is not rebuilt and hashed each time. */
let lastIssuer: { issuer: string; cache: JwksCache } | undefined;

/** The cache of an issuer's published keys (`{issuer}/.well-known/jwks.json`). */
export function jwksCacheForIssuer(issuer: string): JwksCache {
  if (lastIssuer?.issuer !== issuer) lastIssuer = { issuer, cache: jwksCacheFor(`${issuer}/.well-known/jwks.json`) };
  return lastIssuer.cache;
}
