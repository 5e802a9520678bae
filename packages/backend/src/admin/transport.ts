import type { ErrorCode, RouteCaller, SecretKeyRoutes } from '@gatehouse/contract';
import { readErrorBody } from '@gatehouse/contract/error-body';
import { routeTarget } from '@gatehouse/contract/route-target';
import { GatehouseApiError, GatehouseNetworkError } from './api-error.js';

export interface RetryOptions {
  /** How many times a 429 is retried after waiting its Retry-After; default 2. 0 turns retries off. */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited for: the 429 is thrown at once; default 60. */
  maxWaitSeconds?: number;
}

export interface TransportOptions {
  secretKey: string;
  baseUrl: string;
  retry?: RetryOptions;
  /** Per request, in ms; default 30000. */
  timeoutMs?: number;
}

/** The secret-key API, called by route: `request('GET /v1/users/{userId}', {params: {userId}})`. */
export type AdminCall = RouteCaller<SecretKeyRoutes>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function toApiError(response: Response): Promise<GatehouseApiError> {
  const text = await response.text().catch(() => '');
  const read = readErrorBody(response.status, response.headers.get('retry-after'), text);
  // A 429 without a readable Retry-After is retried after 1 s.
  const retryAfter = response.status === 429 ? (read.retryAfter ?? 1) : undefined;
  return new GatehouseApiError(read.status, read.code, read.message, read.details, retryAfter);
}

/** Sends secret-key requests: JSON in and out, 429s waited for and retried, refusals as GatehouseApiError. */
export class Transport {
  private readonly root: string;
  private readonly maxRetries: number;
  private readonly maxWaitSeconds: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: TransportOptions) {
    this.root = options.baseUrl.replace(/\/+$/, '');
    this.maxRetries = options.retry?.maxRetries ?? 2;
    this.maxWaitSeconds = options.retry?.maxWaitSeconds ?? 60;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** One route of the secret-key API: its path filled from `params`, `query` appended, `body` as JSON. */
  readonly request: AdminCall = ((route: string, input?: { params?: Record<string, string>; query?: object; body?: unknown }) =>
    this.send(route, input ?? {})) as AdminCall;

  private async send(route: string, options: { params?: Record<string, string>; query?: object; body?: unknown }): Promise<unknown> {
    const { method, path } = routeTarget(route, options);
    const url = new URL(this.root + path).href;
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.secretKey}`, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const body = options.body === undefined ? null : JSON.stringify(options.body);
    for (let attempt = 0; ; attempt++) {
      const response = await this.fetch(method, url, headers, body);
      if (response.ok) return response.status === 204 ? undefined : await response.json();
      const error = await toApiError(response);
      if (error.status === 429 && attempt < this.maxRetries && (error.retryAfter ?? 1) <= this.maxWaitSeconds) {
        await sleep((error.retryAfter ?? 1) * 1000);
        continue;
      }
      throw error;
    }
  }

  /** fetch, with a failure to get any answer as a GatehouseNetworkError a caller can tell apart. */
  private async fetch(method: string, url: string, headers: Record<string, string>, body: string | null): Promise<Response> {
    try {
      return await fetch(url, { method, headers, body, redirect: 'error', signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      throw new GatehouseNetworkError(timedOut ? 'timeout' : 'network', method, url, { cause: error });
    }
  }
}

export type { ErrorCode };
