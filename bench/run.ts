/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named as arguments).
 * Each module exports `run(): Promise<void>` and prints its own ratios against the raw limit,
 * measured in the same run. Benchmarks report timings; tests never assert them.
 *
 * `--smoke` runs each one briefly (one short round), so `npm test` proves every bench still runs
 * (bench/smoke.test.ts); its numbers mean nothing.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadLine, machineLine } from './lib/machine.js';

const SMOKE: Record<string, string> = {
  BENCH_SECONDS: '1',
  BENCH_ROUNDS: '1',
  BENCH_WARM_UP_SECONDS: '1',
  BENCH_WARM_UP_OPERATIONS: '0',
  BENCH_SIGN_IN_SECONDS: '1',
  BENCH_CONNECTIONS: '4',
  BENCH_WEBHOOK_EVENTS: '20',
  BENCH_STARTUP_ROUNDS: '1',
  BENCH_IDLE_SECONDS: '1',
  BENCH_USER_SIZES: '500,1000',
  BENCH_PAGES: '3',
  BENCH_RATE_WARM_UP_SECONDS: '0.2',
  BENCH_IMPORT_USERS: '1000',
  BENCH_MFA_USERS: '12',
};

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
// Before the benches load: they read their settings when imported. Settings given explicitly win.
if (smoke) for (const [name, value] of Object.entries(SMOKE)) process.env[name] ??= value;
const only = args.filter((a) => a !== '--smoke');
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();

console.log(`Gatehouse benchmarks${smoke ? ' (smoke run: durations too short to mean anything)' : ''} on ${machineLine()}`);
console.log(
  `Database: ${process.env.DATABASE_URL ? 'SQLite and PostgreSQL (DATABASE_URL)' : 'SQLite (set DATABASE_URL to add PostgreSQL)'}; Redis: ${process.env.REDIS_URL ? 'yes (REDIS_URL)' : 'no (set REDIS_URL to run PostgreSQL as several nodes would)'}\n`,
);
for (const file of files) {
  const mod = (await import(pathToFileURL(path.join(here, file)).href)) as { run: () => Promise<void> };
  console.log(`== ${file} (${loadLine()})`);
  await mod.run();
  console.log('');
}
if (files.length === 0) {
  console.log('No benchmarks matched.');
  process.exitCode = 1;
}
