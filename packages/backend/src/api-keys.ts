import { ApiKeyVerificationError } from './errors.js';

export interface VerifyApiKeyOptions {
  /** `sk_test_…` or `sk_live_…` of the environment the key belongs to. Server side only. */
  secretKey: string;
  /** The Gatehouse server root, e.g. `https://auth.example.com` (no `/v1`). */
  baseUrl: string;
  /**
   * How long a verified key is remembered by this process, in ms; default 10000, 0 for none. A key
   * revoked in Gatehouse is refused by Gatehouse at once, but a copy remembered here keeps passing
   * for at most this long (and never past the key's own expiry). Refusals are never remembered.
   */
  cacheTtlMs?: number;
  /** Per request, in ms; default 5000. */
  timeoutMs?: number;
}

/** What Gatehouse says of a valid key. */
export interface VerifiedApiKey {
  /** `ak_…` */
  id: string;
  /** The user (`user_…`) or organization (`org_…`) the key acts for. */
  subject: string;
  scopes: string[];
  /** ms since the epoch; null: never expires. */
  expiresAt: number | null;
}

const DEFAULT_TTL_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_ENTRIES = 1_000;

interface Entry {
  key: VerifiedApiKey;
  /** When Gatehouse answered; each call judges the copy's age by its own cacheTtlMs. */
  at: number;
}

/** Verified keys per environment (secret key) and server; each bounded, oldest dropped first. */
const caches = new Map<string, Map<string, Entry>>();
/** Verifications under way, so concurrent requests with one key ask once. */
const inFlight = new Map<string, Promise<VerifiedApiKey>>();

function checkOptions(options: VerifyApiKeyOptions): void {
  if (typeof options?.secretKey !== 'string' || !/^sk_(test|live)_/.test(options.secretKey)) {
    throw new TypeError('verifyApiKey needs secretKey: the sk_test_… or sk_live_… key of the environment the API keys belong to.');
  }
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('verifyApiKey needs baseUrl: the Gatehouse server root, such as https://auth.example.com.');
  }
  const ttl = options.cacheTtlMs;
  if (ttl !== undefined && !(Number.isFinite(ttl) && ttl >= 0))
    throw new TypeError('options.cacheTtlMs must be a number of milliseconds, 0 or more.');
}

function invalid(): ApiKeyVerificationError {
  return new ApiKeyVerificationError(
    'api-key-invalid',
    'Unknown, revoked or expired API key. Create a new key in Gatehouse, and send it exactly as it was shown.',
  );
}

/**
 * Asks Gatehouse whether an API key (`gh_ak_…`) is valid (`POST /v1/api-keys/verify`) and returns
 * its id, subject, scopes and expiry. Throws `ApiKeyVerificationError` with reason `api-key-invalid`
 * (unknown, revoked or expired) or `api-key-unavailable` (Gatehouse could not be asked). A valid
 * answer is remembered for `cacheTtlMs` (see there for what that means for revocation).
 */
export async function verifyApiKey(secret: string, options: VerifyApiKeyOptions): Promise<VerifiedApiKey> {
  checkOptions(options);
  if (typeof secret !== 'string' || !secret.startsWith('gh_ak_') || secret.length > 256) throw invalid();
  const root = options.baseUrl.replace(/\/+$/, '');
  const scope = `${root}\u0000${options.secretKey}`;
  const ttl = options.cacheTtlMs ?? DEFAULT_TTL_MS;
  const now = Date.now();
  const cached = ttl > 0 ? caches.get(scope)?.get(secret) : undefined;
  if (cached && now - cached.at < ttl && (cached.key.expiresAt === null || now < cached.key.expiresAt)) return cached.key;

  const flightKey = `${scope}\u0000${secret}`;
  let pending = inFlight.get(flightKey);
  if (!pending) {
    pending = ask(root, options, secret).finally(() => inFlight.delete(flightKey));
    inFlight.set(flightKey, pending);
  }
  let key: VerifiedApiKey;
  try {
    key = await pending;
  } catch (error) {
    // A refused key is forgotten at once.
    if (error instanceof ApiKeyVerificationError && error.reason === 'api-key-invalid') caches.get(scope)?.delete(secret);
    throw error;
  }
  let entries = caches.get(scope);
  if (!entries) caches.set(scope, (entries = new Map()));
  entries.delete(secret);
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(secret, { key, at: Date.now() });
  return key;
}

async function ask(root: string, options: VerifyApiKeyOptions, secret: string): Promise<VerifiedApiKey> {
  let response: Response;
  try {
    response = await fetch(`${root}/v1/api-keys/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.secretKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ secret }),
      redirect: 'error',
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiKeyVerificationError(
      'api-key-unavailable',
      `Gatehouse could not be asked about the API key: ${(error as Error).message}.`,
    );
  }
  if (response.status === 401 || response.status === 400) {
    await response.body?.cancel().catch(() => undefined);
    throw invalid();
  }
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new ApiKeyVerificationError(
      'api-key-unavailable',
      `Gatehouse answered ${response.status} when verifying the API key${response.status === 403 ? " (check secretKey: it must be the environment's secret key)" : ''}: ${text.slice(0, 200)}`,
    );
  }
  const body = (await response.json()) as VerifiedApiKey;
  return { id: body.id, subject: body.subject, scopes: body.scopes, expiresAt: body.expiresAt };
}
