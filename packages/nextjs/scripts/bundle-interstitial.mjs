// The interstitial's script: @gatehouse/js and src/interstitial-client.ts in one minified script,
// written as a module exporting it as a string, beside the compiled package.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  entryPoints: [`${root}src/interstitial-client.ts`],
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  platform: 'browser',
  write: false,
  // The @gatehouse/js sources, so the bundle never depends on its build order.
  alias: { '@gatehouse/js': `${root}../js/src/index.ts` },
});
const script = result.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
await writeFile(`${root}dist/server/interstitial-script.js`, `export const INTERSTITIAL_SCRIPT = ${JSON.stringify(script)};\n`);
await writeFile(
  `${root}dist/server/interstitial-script.d.ts`,
  'export declare const INTERSTITIAL_SCRIPT: string;\n',
);
console.log(`interstitial script: ${(script.length / 1024).toFixed(1)} kB`);
