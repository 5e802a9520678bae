#!/usr/bin/env node
/**
 * Builds the server for `npm start`, so a start reads a few files and transpiles nothing (tsx at run
 * time cost about a second and 33 MB):
 * - dist/server.cjs: src/main.ts and the npm dependencies, bundled (resolving and reading several
 *   hundred module files was most of what a start cost once nothing was transpiled), with its map;
 * - dist/main.js and dist/loader.js: what `npm start` runs, which runs server.cjs with V8's code cache;
 * - dist/server.cjs.v8cache: that cache, made here by starting the server once (src/boot/loader.ts);
 * - dist/import.js: `npm run import` (src/cli/import.ts), an ES module bundle; dist/backup.js and dist/migrate.js: `npm run backup`, `npm run migrate`.
 * Runs at install (`prepare`); `npm run build -w packages/server` after changing the sources.
 */
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Native addons load their binaries beside themselves, and the AWS SDK and SAML's libraries are
// required only when first used: those stay requires of node_modules. PostgreSQL's, Redis's and
// SMTP's clients are required at run time only when configured (src/lib/lazy.ts), so they are never bundled.
const external = ['better-sqlite3', '@node-rs/argon2', '@node-rs/bcrypt', '@aws-sdk/*', '@node-saml/*', '@xmldom/*'];

const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

/** @type {import('esbuild').BuildOptions} */
const bundled = {
  bundle: true,
  platform: 'node',
  // CommonJS, which V8's code cache can serve on Node 20 (src/boot/loader.ts). What the code
  // imports lazily (the S3 store, SSO's clients) is still evaluated only when first used.
  format: 'cjs',
  target: 'node20.19',
  external,
  alias: { yaml: path.join(root, 'scripts/yaml-unavailable.cjs') },
  define: { 'import.meta.url': '__gatehouseModuleUrl' },
  // "use strict" first: esbuild's own comes after the banner, where it no longer counts.
  banner: { js: "'use strict'; const __gatehouseModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: 'linked',
  // Stack traces need the mappings, not the sources' text (the sources are in the repository): the
  // map is read for the first trace, and the text was 3.5 of its 5 MB.
  sourcesContent: false,
  legalComments: 'none',
  // Less text for V8 to parse (about a fifth of it); names are kept for stack traces and for code
  // that reads them.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  logLevel: 'warning',
};

const [server] = await Promise.all([
  build({ ...bundled, entryPoints: [path.join(root, 'src/main.ts')], outfile: path.join(dist, 'server.cjs'), metafile: true }),
  // The import command awaits at its top level, which only an ES module can; it starts rarely.
  build({
    ...bundled,
    entryPoints: [path.join(root, 'src/cli/import.ts')],
    outfile: path.join(dist, 'import.js'),
    format: 'esm',
    define: {},
    // Bundled CommonJS dependencies call require() for Node's own modules; an ES module has none.
    banner: { js: "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);" },
  }),
  // `npm run backup` and `npm run migrate`: ES module bundles of their own, as the import command.
  build({
    ...bundled,
    entryPoints: [
      { in: path.join(root, 'src/cli/backup.ts'), out: 'backup' },
      { in: path.join(root, 'src/cli/migrate.ts'), out: 'migrate' },
    ],
    outdir: dist,
    format: 'esm',
    define: {},
    banner: { js: "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);" },
  }),
  // The loader is two small ES modules of Node's own imports, transpiled as they are.
  build({
    entryPoints: [
      { in: path.join(root, 'src/boot/start.ts'), out: 'main' },
      { in: path.join(root, 'src/boot/loader.ts'), out: 'loader' },
    ],
    outdir: dist,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    logLevel: 'warning',
  }),
]);

// In the script the loader runs, import() has no loader (src/boot/loader.ts): what the server
// loads lazily from node_modules it require()s (src/lib/lazy.ts).
const dynamicImports = Object.entries(server.metafile.inputs).flatMap(([file, input]) =>
  input.imports.filter((i) => i.kind === 'dynamic-import' && i.external).map((i) => `${file}: import('${i.path}')`),
);
// (A computed import(x) is not in the metafile: the bundle's text is searched too. A method named
// import, as @peculiar/x509's `this.import(data)` and `import(data){…}` under @simplewebauthn/server, is not one.)
const computed = readFileSync(path.join(dist, 'server.cjs'), 'utf8').match(/(?<![.\w$])import\s*\((?![\w$]*\)\s*\{)/g) ?? [];
if (computed.length > dynamicImports.length) dynamicImports.push(`${computed.length} import( in dist/server.cjs`);
if (dynamicImports.length > 0) {
  throw new Error(`The server's bundle cannot import() what it leaves out; use requireLazily (src/lib/lazy.ts):\n${dynamicImports.join('\n')}`);
}

// Files the code reads beside itself (new URL('./…', import.meta.url)).
copyFileSync(path.join(root, 'src/identity/common-passwords.txt'), path.join(dist, 'common-passwords.txt'));

await makeCodeCache();

/**
 * Starts the built server once, on the embedded default in a directory of its own, and asks it
 * for V8's code cache once it has started and answered: the cache then holds what a start
 * compiles. Without it a start works, slower, and says so; so a failure here is a warning, not a
 * failed install, and nothing here waits without a bound.
 */
async function makeCodeCache() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-code-cache-'));
  // Not the caller's environment: a DATABASE_URL or REDIS_URL there is not this start's to touch.
  // NODE_OPTIONS is kept: V8 refuses a cache made under other V8 flags than the start's.
  const env = { PATH: process.env.PATH ?? '' };
  for (const name of ['HOME', 'NODE_OPTIONS', 'TMPDIR', 'SYSTEMROOT', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA']) {
    if (process.env[name]) env[name] = process.env[name];
  }
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(dist, 'main.js')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...env, GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEHOUSE_MAKING_CODE_CACHE: '1' },
  });
  const closed = once(child, 'close');
  let banner = '';
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the server did not start and answer within 60 s')), 60_000);
      const fail = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      child.on('error', fail);
      child.once('exit', (code, signal) => fail(new Error(`the server exited (${signal ?? code}): ${errors.trim().slice(-2000)}`)));
      child.on('message', (message) => {
        clearTimeout(timer);
        if (message?.written === true) resolve();
        else reject(new Error(message?.error ?? `an unexpected answer, ${JSON.stringify(message)}`));
      });
      // Started once the banner is out (main() has then run everything a start runs); then one
      // request, as the first request after a start.
      const onBanner = (chunk) => {
        banner += chunk;
        if (!banner.includes('Gatehouse is running.') || !banner.endsWith('\n\n')) return;
        child.stdout.off('data', onBanner);
        fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(10_000) })
          .then((response) => {
            if (!response.ok) throw new Error(`GET /v1/health answered ${response.status}`);
            child.send('write-code-cache', (error) => error && fail(error));
          })
          .catch(fail);
      };
      child.stdout.on('data', onBanner);
    });
  } catch (error) {
    console.warn(`Warning: the start-up code cache could not be made (${error.message}); npm start works, about 0.25 s slower.`);
  } finally {
    child.stdout.resume();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    const stubborn = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await closed;
    clearTimeout(stubborn);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
