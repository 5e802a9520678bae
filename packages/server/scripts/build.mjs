#!/usr/bin/env node
/**
 * Builds the server for `npm start`: dist/main.js (plus a chunk for each lazily imported part), with
 * source maps, so a start reads one file and transpiles nothing (tsx at run time cost about a second and 33 MB).
 *
 * Everything is bundled, the npm dependencies too: resolving and reading several hundred module
 * files was most of what a start cost once nothing was transpiled.
 * Runs at install (`prepare`); `npm run build -w packages/server` after changing the sources.
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Native addons load their binaries beside themselves, and the AWS SDK is imported only when S3 is
// configured (its own chunk): those stay imports of node_modules. PostgreSQL's, Redis's and SMTP's
// clients are required at run time only when configured (src/lib/lazy.ts), so they are never bundled.
const external = ['better-sqlite3', '@node-rs/argon2', '@node-rs/bcrypt', '@aws-sdk/*', '@node-saml/*', '@xmldom/*'];

const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

await build({
  // The server, and the import command (`npm run import`, src/cli/import.ts).
  entryPoints: [path.join(root, 'src/main.ts'), path.join(root, 'src/cli/import.ts')],
  outbase: path.join(root, 'src'),
  outdir: dist,
  bundle: true,
  // What the code imports lazily (the S3 store) becomes a chunk of its own, loaded when first used.
  splitting: true,
  chunkNames: '[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  external,
  alias: { yaml: path.join(root, 'scripts/yaml-unavailable.cjs') },
  // Bundled CommonJS dependencies call require() for Node's own modules; an ES module has none.
  banner: { js: "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  // Stack traces need the mappings, not the sources' text (the sources are in the repository): with
  // --enable-source-maps Node reads and parses the map as the module loads, and the text was 3.5 of
  // its 5 MB, about 50 ms of every start.
  sourcesContent: false,
  legalComments: 'none',
  // Less text for V8 to parse at start (about a fifth of it); names are kept for stack traces and
  // for code that reads them.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  logLevel: 'warning',
});

// Files the code reads beside itself (new URL('./…', import.meta.url)).
copyFileSync(path.join(root, 'src/identity/common-passwords.txt'), path.join(dist, 'common-passwords.txt'));
