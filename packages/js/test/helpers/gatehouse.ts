import { createServer } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { startTestApp, type TestApp } from '../../../server/test/helpers/app.js';

export { GOOD_PASSWORD, uniqueEmail } from '../../../server/test/helpers/identity.js';
export { makePng } from '../../../server/test/helpers/images.js';
export { codeFrom, outbox, REDIRECT, tokenFrom } from '../../../server/test/helpers/flows.js';

export interface RefreshRecord {
  /** The publishable key it came with: one environment per scenario. */
  key: string;
  refreshToken: string;
  status: number;
  code: string | undefined;
}

export interface ErrorRecord {
  code: string;
  environmentId: string | undefined;
}

/** The environment a request's credential names, even when the credential was refused (a revoked session's token). */
function environmentOf(request: FastifyRequest): string | undefined {
  const resolved = (request as { auth?: { environment?: { id: string } } | null }).auth?.environment?.id;
  if (resolved) return resolved;
  const token = request.headers.authorization?.slice('Bearer '.length) ?? '';
  try {
    const { iss } = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iss?: string };
    return /\/environments\/(env_[0-9a-z]+)/.exec(iss ?? '')?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The error codes a scenario's environment was answered, and those no environment could be named
 * for (a request without a credential, a publishable key refused before it was resolved): only
 * another environment's answers are left out.
 */
export function errorCodesOf(live: Pick<LiveGatehouse, 'errors'>, environmentId: string): string[] {
  return live.errors.filter((e) => e.environmentId === undefined || e.environmentId === environmentId).map((e) => e.code);
}

/** A real Gatehouse listening on a loopback port, which counts every refresh it answers. */
export interface LiveGatehouse {
  t: TestApp;
  url: string;
  refreshes: RefreshRecord[];
  /**
   * Every error answer, with the environment its credential names (a publishable key's, or an
   * access token's issuer): another scenario's tabs may still be answered after it ended (see errorCodesOf).
   */
  errors: ErrorRecord[];
  /** While set, refreshes with this publishable key are answered 429 with `Retry-After: 1`. */
  throttleRefreshesOf: string | undefined;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** `now`: the server's clock (see testClock()), for rules that look at time. */
export async function startLiveGatehouse(options: { now?: () => number } = {}): Promise<LiveGatehouse> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const live = {
    refreshes: [] as RefreshRecord[],
    errors: [] as ErrorRecord[],
    throttleRefreshesOf: undefined as string | undefined,
  };
  const isRefresh = (request: FastifyRequest) => request.method === 'POST' && request.url === '/v1/auth/refresh';
  const t = await startTestApp({
    ...(options.now ? { now: options.now } : {}),
    // The store's public URLs must be this server's own loopback address to be saved as imageUrl.
    assetBaseUrl: url,
    // Links in emails (the hosted invitation page) and SSO redirect URIs must reach this server from a browser.
    baseUrl: url,
    routes(app) {
      app.addHook('preHandler', async (request, reply) => {
        const key = request.headers.authorization?.slice('Bearer '.length);
        if (isRefresh(request) && key !== undefined && key === live.throttleRefreshesOf) {
          return reply
            .code(429)
            .header('retry-after', '1')
            .send({ error: { code: 'rate_limited', message: 'Over the limit (injected by the test); retry in 1 seconds.' } });
        }
      });
      app.addHook('onSend', async (request, reply, payload) => {
        let code: string | undefined;
        if (reply.statusCode >= 400 && typeof payload === 'string') {
          try {
            code = (JSON.parse(payload) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
          if (code) live.errors.push({ code, environmentId: environmentOf(request) });
        }
        if (isRefresh(request)) {
          const body = request.body as { refreshToken?: string } | undefined;
          live.refreshes.push({
            key: request.headers.authorization?.slice('Bearer '.length) ?? '',
            refreshToken: body?.refreshToken ?? '',
            status: reply.statusCode,
            code,
          });
        }
        return payload;
      });
    },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(live, { t, url, close: () => t.close() });
}
