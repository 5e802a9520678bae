import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCREENSHOTS = fileURLToPath(new URL('../../../docs/screenshots/console/', import.meta.url));

function newest(dir: string): number {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return time;
}

/** The server serves packages/console/dist: a build older than src/ would test yesterday's console. */
export function assertConsoleBuilt(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  let built: number;
  try {
    built = statSync(join(root, 'dist/index.html')).mtimeMs;
  } catch {
    throw new Error('packages/console/dist is missing: run `npm run build -w packages/console` (npm install and npm test build it).');
  }
  if (newest(join(root, 'src')) > built) {
    throw new Error('packages/console/dist is older than its sources: run `npm run build -w packages/console` (npm test builds it first).');
  }
}

export function platformKey(output: string): string {
  return /Platform key:\s+(plk_\S+)/.exec(output)![1]!;
}
