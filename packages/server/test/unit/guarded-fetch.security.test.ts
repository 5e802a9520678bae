import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/lib/guarded-fetch.js';

/** What an IdP's endpoints are fetched with (lib/guarded-fetch.ts), against a real local server. */
describe('guardedFetch against a hostile server', () => {
  let server: Server;
  let base: string;
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/ok') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"issuer":"x"}');
      if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        for (let i = 0; i < 20; i++) res.write(chunk);
        return res.end();
      }
      // Slowloris: headers at once, then a byte every 50 ms, never ending (well inside the idle timeout).
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      const timer = setInterval(() => res.write(' '), 50);
      timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const fetchFor = (environmentType: 'development' | 'production', deadlineMs?: number) =>
    guardedFetch({ environmentType, resolve: async () => [{ address: '127.0.0.1', family: 4 }], ...(deadlineMs ? { deadlineMs } : {}) });

  it('answers a well-behaved endpoint', async () => {
    const response = await fetchFor('development')(`${base}/ok`, { method: 'GET', headers: {} });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ issuer: 'x' });
  });

  it('gives up on an answer trickled a byte at a time, at its deadline', async () => {
    const error = await fetchFor('development', 400)(`${base}/slow`, { method: 'GET', headers: {} }).then(
      () => undefined,
      (e: unknown) => e as TypeError & { cause?: Error },
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error?.cause?.message ?? error?.cause)).toMatch(/no complete answer within 400 ms/);
  });

  it('gives up on a host whose name never resolves, at the same deadline', async () => {
    const stuck = guardedFetch({ environmentType: 'development', resolve: () => new Promise(() => undefined), deadlineMs: 200 });
    const error = await stuck('http://idp.example.test/.well-known/openid-configuration', { method: 'GET', headers: {} }).then(
      () => undefined,
      (e: unknown) => e as TypeError & { cause?: Error },
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error?.cause?.message)).toMatch(/no address within 200 ms/);
  });

  it('refuses an answer over 1 MiB rather than buffering it', async () => {
    await expect(fetchFor('development')(`${base}/huge`, { method: 'GET', headers: {} })).rejects.toThrow(/fetch failed/);
  });

  it('never connects to a loopback address for a production environment', async () => {
    await expect(fetchFor('production')(`${base}/ok`, { method: 'GET', headers: {} })).rejects.toThrow(/fetch failed/);
  });
});
