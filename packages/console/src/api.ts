import { readErrorBody } from '@gatehouse/contract/error-body';
import type { Gatehouse } from '@gatehouse/js';

/** A refusal of the platform API, carrying its message (every server error is shown as its message). */
export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    /** On a 429: the seconds the server asked to wait. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export type Api = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

/**
 * Calls the platform API with the operator's access token (the console's browser credential; the
 * platform key never reaches a browser). `gh.fetch` refreshes the token when needed.
 */
export function createApi(client: Gatehouse): Api {
  return async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
    const init: RequestInit = { method };
    if (body instanceof Blob) {
      init.body = body;
      init.headers = { 'content-type': body.type };
    } else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    let response: Response;
    try {
      response = await client.fetch(path, init);
    } catch (error) {
      throw new ApiFailure(`The server could not be reached: ${error instanceof Error ? error.message : String(error)}`, 'network', 0);
    }
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    if (!response.ok) {
      // The one reading of a refusal that every Gatehouse client shares (packages/contract).
      const read = readErrorBody(response.status, response.headers.get('retry-after'), text);
      throw new ApiFailure(read.message, read.code, read.status, read.retryAfter);
    }
    try {
      return (text ? JSON.parse(text) : undefined) as T;
    } catch {
      throw new ApiFailure(`The server answered ${response.status} with a body that is not JSON. Check that the console is served by Gatehouse.`, 'internal', response.status);
    }
  };
}

export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
