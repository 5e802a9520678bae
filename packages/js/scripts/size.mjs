// The browser bundle's size: everything a page imports, minified and gzipped.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const result = await build({
  entryPoints: [entry],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  write: false,
});
const code = result.outputFiles[0].contents;
const gzipped = gzipSync(code, { level: 9 }).length;
const kB = (n) => (n / 1024).toFixed(2);
console.log(`@gatehouse/js browser bundle: ${kB(code.length)} kB minified, ${kB(gzipped)} kB minified + gzipped (goal < 12 kB)`);
if (gzipped >= 12 * 1024) process.exitCode = 1;
