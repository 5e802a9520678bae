import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveSendAddresses, type Resolver } from './addresses.js';

/** openid-client's customFetch shape: what the IdP calls (discovery, JWKS, token, userinfo) go through. */
export type FetchLike = (
  url: string,
  options: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal },
) => Promise<Response>;

/** An IdP answer is a small JSON document; a larger one is refused rather than buffered. */
const MAX_BODY = 1024 * 1024;

function bodyBytes(body: unknown): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new TypeError('unsupported request body');
}

/** The whole of a call (connect, answer, body) within this, however slowly the other side trickles. */
const DEFAULT_DEADLINE_MS = 15_000;

/** One request over node's client whose socket may connect only to `targets`. */
function pinnedRequest(
  url: URL,
  targets: { address: string; family: number }[],
  options: Parameters<FetchLike>[1],
  deadline: { remainingMs: number; totalMs: number },
): Promise<Response> {
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, targets);
    else callback(null, targets[0]!.address, targets[0]!.family);
  };
  const body = bodyBytes(options.body);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = client.request(url, {
      method: options.method,
      headers: { ...options.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      lookup: pinned,
      agent: false,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // 10 s of silence is a failure, as openid-client's own default timeout; and an answer trickled
    // a byte at a time must still be whole by the deadline, or a slow IdP would hold a sign-in open.
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    const timer = setTimeout(() => req.destroy(new Error(`no complete answer within ${deadline.totalMs} ms`)), deadline.remainingMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY) req.destroy(new Error(`answer over ${MAX_BODY} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (Array.isArray(value)) for (const v of value) headers.append(name, v);
          else if (value !== undefined) headers.set(name, value);
        }
        const status = res.statusCode ?? 502;
        const empty = status === 204 || status === 205 || status === 304;
        try {
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers }));
        } catch (error) {
          reject(new TypeError('fetch failed', { cause: error }));
        }
      });
    });
    req.end(body);
  });
}

/**
 * A fetch for calls a production environment makes to addresses an outsider chose (an IdP's issuer
 * and every endpoint its discovery document names). Each call resolves the host, refuses it unless
 * every address is public, and connects to those checked addresses only: no second DNS answer
 * between check and connect (rebinding). Redirects are never followed. `transport` replaces the
 * network after the check (tests reach stand-ins with it).
 */
export function guardedFetch(options: {
  environmentType: 'development' | 'production';
  resolve: Resolver;
  transport?: FetchLike;
  /** The most a call may take in all (default 15 s). */
  deadlineMs?: number;
}): FetchLike {
  return async (raw, init) => {
    const url = new URL(raw);
    const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const started = Date.now();
    // The deadline covers the name's resolution too: an IdP's slow nameserver holds a lookup thread.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no address within ${deadlineMs} ms`)), deadlineMs);
    });
    const targets = await Promise.race([resolveSendAddresses(url, options.environmentType, options.resolve), late])
      .catch((error: unknown) => {
        throw new TypeError('fetch failed', { cause: error });
      })
      .finally(() => clearTimeout(timer));
    if (options.transport) return options.transport(raw, init);
    return pinnedRequest(url, targets, init, { remainingMs: Math.max(1, deadlineMs - (Date.now() - started)), totalMs: deadlineMs });
  };
}
