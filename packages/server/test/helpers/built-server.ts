import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const repositoryRoot = path.resolve(serverDir, '../..');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The arguments of `npm start` after `node` (root package.json), checked to run the built server:
 * tests that start a process run what an operator runs. A build older than the sources would test
 * yesterday's code, so that is an error that says how to rebuild (`npm test` rebuilds first).
 */
export function serverProcessArgs(): string[] {
  const main = path.join(serverDir, 'dist/main.js');
  let built: number;
  try {
    built = statSync(main).mtimeMs;
  } catch {
    throw new Error(`${main} is missing: run \`npm run build -w packages/server\` (npm install and npm test build it).`);
  }
  const sources = Math.max(newestSource(path.join(serverDir, 'src')), newestSource(path.join(repositoryRoot, 'packages/contract/src')));
  if (sources > built) {
    throw new Error(`${main} is older than the sources: run \`npm run build -w packages/server\` (npm test builds it first).`);
  }
  return [main];
}
