import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveSendAddresses, SendRefused, type Resolver } from '../lib/addresses.js';

export interface SendRequest {
  url: string;
  environmentType: 'development' | 'production';
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  resolve: Resolver;
}

export type SendOutcome = { kind: 'response'; status: number; retryAfterMs: number | undefined } | { kind: 'error'; error: string };

const USER_AGENT = 'Gatehouse-Webhooks/1';

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * POSTs one delivery. The host is resolved and checked here (resolveSendAddresses), and the socket
 * connects only to the checked addresses (a `lookup` that answers with them), so a second DNS answer
 * cannot swap in a private address between check and connect. Redirects are not followed: node's
 * client never does, and a 3xx counts as a failure.
 */
export async function sendWebhook(request: SendRequest): Promise<SendOutcome> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { kind: 'error', error: 'The endpoint URL is not valid' };
  }
  let targets: { address: string; family: number }[];
  try {
    targets = await resolveSendAddresses(url, request.environmentType, request.resolve);
  } catch (error) {
    return { kind: 'error', error: error instanceof SendRefused ? error.message : `DNS lookup failed: ${(error as Error).message}` };
  }
  // The socket may only use the addresses that were checked, never a fresh DNS answer.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, targets);
    else callback(null, targets[0]!.address, targets[0]!.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(request.body).toString(),
          'user-agent': USER_AGENT,
          ...request.headers,
        },
        agent: false,
      },
      (res) => {
        // The answer's body is not needed; read a little and drop the rest.
        res.on('data', () => undefined);
        res.on('error', () => undefined);
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers['retry-after'];
        finish({
          kind: 'response',
          status,
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
        });
        res.destroy();
      },
    );
    // The whole exchange, connect to response headers, must fit in the timeout.
    const timer = setTimeout(() => {
      finish({ kind: 'error', error: `No response within ${request.timeoutMs / 1000} s` });
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (error) => finish({ kind: 'error', error: error.message }));
    req.end(request.body);
  });
}
