import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium, installed by .ci/run (never downloaded). Outside CI its absence skips the
 * browser suite loudly; under CI=true it is a failure.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `skipped: Chromium not found at ${CHROMIUM}. Install it with: apt-get install -y chromium (.ci/run does).`;
  if (process.env.CI === 'true') throw new Error(`CI=true but the browser suite cannot run: ${message}`);
  console.warn(`\n[gatehouse/js] Browser suite ${message}\n`);
  return false;
}

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/** The test page: the client from the bundle, its state rendered, `window.gh` for the test to drive. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Gatehouse test page</title>
<style>body{font:14px system-ui,sans-serif;margin:24px}pre{background:#f4f4f4;padding:12px}img{width:64px;height:64px;border-radius:50%;background:#ddd}img:not([src]){visibility:hidden}
.signed-in{color:#0a0}.signed-out{color:#a00}.degraded{color:#b60}</style></head>
<body><h1>Gatehouse test page</h1><p id="status">loading…</p><img id="avatar" alt="avatar"><pre id="state"></pre>
<script type="module">
import { createGatehouse } from './gatehouse.js';
const params = new URLSearchParams(location.search);
if (params.get('legacy') === '1') {
  // A browser without Web Locks, BroadcastChannel and IndexedDB: the localStorage lease and the storage event.
  Object.defineProperty(navigator, 'locks', { value: undefined });
  delete window.BroadcastChannel;
  Object.defineProperty(window, 'indexedDB', { value: undefined });
}
const gh = createGatehouse({ publishableKey: params.get('pk'), baseUrl: params.get('base'), sessionCookie: params.get('cookie') === '1' });
window.gh = gh;
const render = (s) => {
  const status = document.getElementById('status');
  status.textContent = !s.isLoaded ? 'loading…' : s.isSignedIn ? 'signed in as ' + (s.user?.email ?? '…') + (s.degraded ? ' (degraded: ' + s.degraded.reason + ')' : '') : 'signed out';
  status.className = !s.isLoaded ? '' : s.degraded ? 'degraded' : s.isSignedIn ? 'signed-in' : 'signed-out';
  const avatar = document.getElementById('avatar');
  if (s.user?.imageUrl && avatar.src !== s.user.imageUrl) avatar.src = s.user.imageUrl;
  document.getElementById('state').textContent = JSON.stringify({ ...s, session: s.session && { id: s.session.id, expiresAt: new Date(s.session.expiresAt).toISOString() }, degraded: s.degraded && { reason: s.degraded.reason, code: s.degraded.error.code } }, null, 2);
};
gh.subscribe(render);
gh.load().then(render, (e) => { document.getElementById('status').textContent = 'load failed: ' + e.message; }).finally(() => { window.ready = true; });
</script></body></html>`;

export interface PageServer {
  /** The page's URL on the given loopback host, for one environment. */
  url(host: string, publishableKey: string, gatehouseUrl: string, options?: { legacy?: boolean; cookie?: boolean }): string;
  close(): Promise<void>;
}

/** Serves the page and the bundle (built from source now) on every loopback address. */
export async function startPageServer(): Promise<PageServer> {
  const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
  const bundle = await build({ entryPoints: [entry], bundle: true, format: 'esm', target: 'es2022', platform: 'browser', write: false });
  const script = bundle.outputFiles[0]!.contents;
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://page').pathname;
    if (path === '/gatehouse.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (path === '/') response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (host, pk, base, options = {}) =>
      `http://${host}:${port}/?pk=${encodeURIComponent(pk)}&base=${encodeURIComponent(base)}${options.legacy ? '&legacy=1' : ''}${options.cookie ? '&cookie=1' : ''}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
