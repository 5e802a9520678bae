import type { PlatformRoutes, RouteCaller } from '@gatehouse/contract';
import { readErrorBody } from '@gatehouse/contract/error-body';
import { routeTarget } from '@gatehouse/contract/route-target';

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

/** The console's routes (`@gatehouse/contract`'s PlatformRoutes), called by key: `api('GET /v1/platform/projects/{projectId}', {params: {projectId}})`. */
export type Api = RouteCaller<PlatformRoutes>;

/** How the console sends a request: the operator's `gh.fetch` (with the access token), or plain fetch before sign-in. */
export type Fetcher = (path: string, init: RequestInit) => Promise<Response>;

/**
 * Calls the console's routes through `fetcher`: with the operator's access token (the console's
 * browser credential; the platform key never reaches a browser) `gh.fetch` refreshes the token
 * when needed. A Blob body is sent as its bytes, anything else as JSON.
 */
export function createApi(fetcher: Fetcher): Api {
  return (async (route: string, input: { params?: Record<string, string>; query?: object; body?: unknown } = {}) => {
    const { method, path } = routeTarget(route, input);
    const { body } = input;
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
      response = await fetcher(path, init);
    } catch (error) {
      throw new ApiFailure(`The server could not be reached: ${error instanceof Error ? error.message : String(error)}`, 'network', 0);
    }
    if (response.status === 204) return undefined;
    const text = await response.text();
    if (!response.ok) {
      // The one reading of a refusal that every Gatehouse client shares (packages/contract).
      const read = readErrorBody(response.status, response.headers.get('retry-after'), text);
      throw new ApiFailure(read.message, read.code, read.status, read.retryAfter);
    }
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiFailure(
        `The server answered ${response.status} with a body that is not JSON. Check that the console is served by Gatehouse.`,
        'internal',
        response.status,
      );
    }
  }) as Api;
}

/** The console's routes that need no sign-in (its configuration, the setup link), with the page's own fetch. */
export const openApi: Api = createApi((path, init) => fetch(path, init));

export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
