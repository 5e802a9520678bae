/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named as arguments).
 * Each module exports `run(): Promise<void>` and prints its own ratios against the raw limit,
 * measured in the same run. Benchmarks report timings; tests never assert them.
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();

console.log(`Gatehouse benchmarks on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}`);
console.log(
  `Database: ${process.env.DATABASE_URL ? 'SQLite and PostgreSQL (DATABASE_URL)' : 'SQLite (set DATABASE_URL to add PostgreSQL)'}; Redis: ${process.env.REDIS_URL ? 'yes (REDIS_URL)' : 'no (set REDIS_URL to run PostgreSQL as several nodes would)'}\n`,
);
for (const file of files) {
  const mod = (await import(pathToFileURL(path.join(here, file)).href)) as { run: () => Promise<void> };
  console.log(`== ${file}`);
  await mod.run();
  console.log('');
}
if (files.length === 0) console.log('No benchmarks matched.');
