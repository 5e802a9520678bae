import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../helpers/app.js';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
}

/** A real HTTP receiver on 127.0.0.1: records each delivery and answers from a queue (then 200). */
export async function startReceiver() {
  const received: Received[] = [];
  const answers: Answer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' });
      const answer = answers.shift() ?? { status: 200 };
      const reply = () => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end('ok');
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** Queue the next answers. */
    answer(...next: Answer[]) {
      answers.push(...next);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export async function createEndpoint(
  t: TestApp,
  environmentId: string,
  payload: Record<string, unknown>,
): Promise<{ id: string; secret: string; url: string; eventTypes: string[] | null; enabled: boolean }> {
  const res = await t.call({
    method: 'POST',
    url: `/v1/platform/environments/${environmentId}/webhook-endpoints`,
    credential: t.platformKey,
    payload,
  });
  if (res.statusCode !== 201) throw new Error(`endpoint creation failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export function platformCall(t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  return t.call({ method, url, credential: t.platformKey, ...(payload !== undefined ? { payload: payload as object } : {}) });
}
