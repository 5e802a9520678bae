/**
 * A scripted stand-in for Gatehouse's refresh endpoint, for the timer tests: it issues tokens with
 * the lifetime asked for and answers what each test scripts. The browser suite runs the real server.
 */
export interface Script {
  /**
   * 'hang': no answer until the request's signal aborts. A promise: answers 'ok' once it resolves
   * (a refresh the test holds in flight).
   */
  refresh: () => { status: number; code?: string; retryAfter?: number } | 'network' | 'ok' | 'hang' | Promise<void>;
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function fakeGatehouse(expiresIn = 300) {
  let serial = 0;
  const calls: { path: string; body: any; authorization: string | null }[] = [];
  const script: Script = { refresh: () => 'ok' };
  /** The absolute end of the session /v1/me/sessions reports (cookie mode reads it). */
  const sessionEndsAt = Date.now() + 30 * 24 * 3600_000;
  const session = () => {
    serial++;
    return {
      accessToken: `${b64url({ alg: 'none' })}.${b64url({ sub: 'user_1', sid: 'sess_1', n: serial })}.sig`,
      refreshToken: `rt_${serial}`,
      expiresIn,
      tokenType: 'Bearer',
    };
  };
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const path = new URL(String(input)).pathname;
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    calls.push({ path, body, authorization: new Headers(init.headers).get('authorization') });
    if (path === '/v1/auth/signin') return json(200, { user: { id: 'user_1', email: 'a@example.test' }, session: session() });
    if (path === '/v1/auth/refresh') {
      const outcome = script.refresh();
      if (outcome instanceof Promise) {
        await outcome;
        return json(200, { session: session() });
      }
      if (outcome === 'hang')
        return new Promise<Response>((_, reject) => {
          const signal = init.signal;
          if (!signal) return; // never answers: what a request without a timeout waits for
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      if (outcome === 'network') throw new TypeError('fetch failed');
      if (outcome === 'ok') return json(200, { session: session() });
      const headers: Record<string, string> = outcome.retryAfter === undefined ? {} : { 'retry-after': String(outcome.retryAfter) };
      return json(outcome.status, { error: { code: outcome.code ?? 'internal', message: 'scripted' } }, headers);
    }
    if (path === '/v1/me') {
      const user = { id: 'user_1', email: 'a@example.test', firstName: null, lastName: null, username: null, imageUrl: null };
      return json(200, { user, organizations: [], organization: null });
    }
    if (path === '/v1/me/sessions') {
      return json(200, { data: [{ id: 'sess_1', current: true, createdAt: 0, lastActiveAt: 0, expiresAt: sessionEndsAt, userAgent: null }] });
    }
    if (path === '/v1/auth/signout') return json(204, undefined);
    return json(404, { error: { code: 'not_found', message: 'scripted' } });
  };
  return { fetch, calls, script, refreshCalls: () => calls.filter((c) => c.path === '/v1/auth/refresh') };
}
