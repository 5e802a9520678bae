import type { LightMyRequestResponse } from 'fastify';

/** Headers that vary per request whoever asks: the clock, the rate-limit counters and the request id. */
const PER_REQUEST_HEADERS = new Set(['date', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id']);

/**
 * What a caller can observe of an answer, minus what changes with every request. Two answers that
 * must not reveal whether an account exists compare equal under this.
 */
export function observable(response: LightMyRequestResponse) {
  const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !PER_REQUEST_HEADERS.has(name)));
  return { status: response.statusCode, body: response.body, headers, headerNames: Object.keys(response.headers).sort() };
}
