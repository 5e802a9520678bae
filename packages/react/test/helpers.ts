import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export { chromiumAvailable, CHROMIUM, CHROMIUM_ARGS } from '../../js/test/helpers/browser.js';
export {
  GOOD_PASSWORD,
  codeFrom,
  errorCodesOf,
  makePng,
  outbox,
  startLiveGatehouse,
  uniqueEmail,
  type LiveGatehouse,
} from '../../js/test/helpers/gatehouse.js';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Acme</title><style>body{margin:0}</style></head>
<body><div id="root"></div><script type="module" src="/app.js"></script></body></html>`;

export interface AppServer {
  url(params: Record<string, string>): string;
  close(): Promise<void>;
}

/** Serves the test application, bundled now from the components' source with React. */
export async function startAppServer(): Promise<AppServer> {
  const entry = fileURLToPath(new URL('./app/main.tsx', import.meta.url));
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"development"' },
    write: false,
  });
  const script = bundle.outputFiles[0]!.contents;
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://app').pathname;
    if (path === '/app.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (path === '/') response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (params) => `http://127.0.0.1:${port}/?${new URLSearchParams(params)}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
