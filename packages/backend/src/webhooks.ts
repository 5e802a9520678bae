import type { IncomingHttpHeaders } from 'node:http';
import { nodeCrypto } from './runtime.js';

/** How far a delivery's `webhook-timestamp` may be from this machine's clock (either way). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** A verified delivery's body. */
export interface WebhookEvent<T = unknown> {
  /** e.g. `user.created`, `organizationMembership.updated` */
  type: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  /** The resource as the secret-key API shows it. */
  data: T;
}

export type WebhookHeaders = Headers | IncomingHttpHeaders | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    // Node lowercases header names; an object built by hand may not.
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return Array.isArray(value) ? value[0] : value;
}

function secretBytes(secret: string): Buffer {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhook needs the endpoint secret (whsec_…).');
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length === 0) throw new TypeError('The webhook secret is not whsec_ followed by base64. Copy it as Gatehouse showed it.');
  return bytes;
}

function bodyBytes(rawBody: unknown): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  if (rawBody instanceof ArrayBuffer) return Buffer.from(rawBody);
  throw new WebhookVerificationError(
    'verifyWebhook needs the raw request body (a string or bytes), exactly as received. A parsed JSON object cannot be verified: ' +
      "in Express use express.raw({ type: 'application/json' }) on this route; with fetch, await request.text().",
  );
}

/**
 * Verifies a Standard Webhooks (v1) delivery and returns its parsed body: HMAC-SHA256 with the
 * endpoint secret over `{webhook-id}.{webhook-timestamp}.{body}`, compared in constant time against
 * each `v1,` signature of `webhook-signature` (there are two while a secret rotates), and a
 * timestamp within 5 minutes. Throws WebhookVerificationError otherwise.
 */
export function verifyWebhook<T = unknown>(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string,
): WebhookEvent<T> {
  if (!nodeCrypto) {
    throw new TypeError('verifyWebhook needs node:crypto: receive webhooks in a Node.js route (in Next.js, not on the Edge runtime).');
  }
  const { createHmac, timingSafeEqual } = nodeCrypto;
  const key = secretBytes(secret);
  const body = bodyBytes(rawBody);
  if (headers === null || typeof headers !== 'object') throw new WebhookVerificationError('verifyWebhook needs the request headers.');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'The request lacks webhook-id, webhook-timestamp or webhook-signature: it is not a Gatehouse webhook delivery.',
    );
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a Unix time in seconds.');
  const age = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (age > WEBHOOK_TOLERANCE_SECONDS) {
    throw new WebhookVerificationError(
      `The delivery is ${age} s old, more than the 5 minutes allowed: a replay, or this machine's clock is off.`,
    );
  }
  if (age < -WEBHOOK_TOLERANCE_SECONDS) {
    throw new WebhookVerificationError(
      `The delivery is dated ${-age} s in the future, more than the 5 minutes allowed: check this machine's clock.`,
    );
  }

  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const candidate = Buffer.from(entry.slice(comma + 1), 'base64');
    // Every candidate is compared (no early exit), each in constant time.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      "No webhook-signature matches: the body was changed (verify the raw bytes, before any JSON parsing), or the secret is not this endpoint's.",
    );
  }

  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('The delivery is signed but its body is not JSON.');
  }
  if (typeof event !== 'object' || event === null || typeof (event as WebhookEvent).type !== 'string') {
    throw new WebhookVerificationError('The delivery is signed but its body is not {type, timestamp, data}.');
  }
  return event as WebhookEvent<T>;
}
