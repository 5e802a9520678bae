import type { FastifyPluginAsync } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { apiError } from '../lib/errors.js';

// The console's own scripts and styles only; it talks to this origin's API. Captured emails are
// shown in sandboxed srcdoc frames, which inherit this policy (no script runs in them).
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: http: data: blob:; connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const files = new Map<string, Promise<Buffer>>();

/**
 * A file of the console's build (packages/console/dist, built at install by its `prepare`). Read on
 * first use, not at start, so the console costs the server's start nothing.
 */
function consoleFile(relative: string): Promise<Buffer> {
  let file = files.get(relative);
  if (!file) {
    file = (async () => {
      const require = createRequire(import.meta.url);
      const root = dirname(require.resolve('@gatehouse/console/package.json'));
      return readFile(join(root, 'dist', relative));
    })();
    file.catch(() => files.delete(relative));
    files.set(relative, file);
  }
  return file;
}

const NOT_BUILT = 'The console is not built. Run `npm install` (or `npm run build -w packages/console`).';

export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const index = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const html = await consoleFile('index.html').catch(() => {
      throw apiError('unavailable', NOT_BUILT);
    });
    return reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', CONSOLE_CSP).send(html);
  };
  // The app routes with the URL's fragment (#/projects/…), so two paths serve it: the console and
  // the setup link's landing page.
  app.get('/console', { schema: { summary: 'The console (HTML)', tags: ['console'] } }, index);
  app.get('/console/setup', { schema: { summary: "The console's page for a setup link or an operator invitation (HTML)", tags: ['console'] } }, index);

  app.get(
    '/console/assets/:file',
    {
      schema: {
        summary: "The console's scripts and styles (content-hashed names)",
        tags: ['console'],
        params: { type: 'object', properties: { file: { type: 'string', maxLength: 100 } }, required: ['file'] },
      },
    },
    async (request, reply) => {
      const name = basename((request.params as { file: string }).file);
      const type = TYPES[extname(name)];
      if (!type || name.startsWith('.')) throw apiError('not_found', `There is no console asset "${name}".`);
      const body = await consoleFile(join('assets', name)).catch(() => {
        throw apiError('not_found', `There is no console asset "${name}". ${NOT_BUILT}`);
      });
      return reply.header('content-type', type).header('cache-control', 'public, max-age=31536000, immutable').send(body);
    },
  );
};
