/**
 * Start-up: `npm start` to the first 200 of GET /v1/health, on the embedded default (SQLite, memory
 * limiter, filesystem store, captured email), with a fresh and with a warm data directory, as a ratio
 * to `npm start` of a bare node:http server measured in the same run (npm's own start-up is the
 * floor of both). Rounds alternate; medians. Goal ≤ 2×. Then the server's resident memory 3 s after
 * it answered (goal < 120 MB).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, root } from './lib/gatehouse.js';
import { median } from './lib/median.js';
import { loadLine } from './lib/machine.js';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? process.env.BENCH_ROUNDS ?? 5);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 3);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function bareApp(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-bare-'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bare', private: true, scripts: { start: 'node server.js' } }));
  writeFileSync(
    path.join(dir, 'server.js'),
    "require('node:http').createServer((req, res) => res.end('{\"status\":\"ok\"}')).listen(Number(process.env.PORT), '127.0.0.1');\n",
  );
  return dir;
}

async function firstOk(url: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited (${child.exitCode}) before answering`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Runs `command` in its own process group until it answers, and returns the milliseconds that took. */
async function timeStart(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ ms: number; child: ChildProcess; stop: () => Promise<void> }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, {
    cwd,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
  });
  await firstOk(`http://127.0.0.1:${port}/v1/health`, child);
  const ms = performance.now() - started;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      process.kill(-child.pid!, 'SIGTERM');
    });
  return { ms, child, stop };
}

function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

export async function run(): Promise<void> {
  const main = path.join(root, 'packages/server/dist/main.js');
  try {
    readFileSync(main);
  } catch {
    throw new Error(`${main} is missing: run \`npm run build -w packages/server\` (npm install does it).`);
  }
  const bare = bareApp();
  const warm = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-warm-'));
  const dirs: string[] = [bare, warm];
  const env = (dataDir: string) => ({ GATEHOUSE_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', SMTP_URL: '', S3_BUCKET: '' });
  try {
    // The warm directory holds a migrated database, keys and a default project, as on a second start.
    await (await timeStart(npm, ['start'], root, env(warm))).stop();

    const rows = { bare: [] as number[], fresh: [] as number[], warm: [] as number[] };
    console.log(`  ${ROUNDS} alternating rounds; \`npm start\` to the first 200, bare node:http vs Gatehouse (fresh, warm data dir)`);
    for (let round = 1; round <= ROUNDS; round++) {
      const load = loadLine();
      const b = await timeStart(npm, ['start'], bare, {});
      await b.stop();
      const freshDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-fresh-'));
      dirs.push(freshDir);
      const f = await timeStart(npm, ['start'], root, env(freshDir));
      await f.stop();
      const w = await timeStart(npm, ['start'], root, env(warm));
      await w.stop();
      rows.bare.push(b.ms);
      rows.fresh.push(f.ms);
      rows.warm.push(w.ms);
      console.log(
        `  round ${round} (${load}): bare ${b.ms.toFixed(0)} ms, fresh ${f.ms.toFixed(0)} ms (${(f.ms / b.ms).toFixed(2)}×), warm ${w.ms.toFixed(0)} ms (${(w.ms / b.ms).toFixed(2)}×)`,
      );
    }
    const bareMs = median(rows.bare);
    console.log(
      `  npm start, medians: bare ${bareMs.toFixed(0)} ms; Gatehouse fresh ${median(rows.fresh).toFixed(0)} ms, ratio ${(median(rows.fresh) / bareMs).toFixed(2)}; warm ${median(rows.warm).toFixed(0)} ms, ratio ${(median(rows.warm) / bareMs).toFixed(2)} (goal ≤ 2)`,
    );

    // Memory: the server process itself (npm's own process is not Gatehouse's).
    const server = await timeStart(process.execPath, [main], root, env(warm));
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const rss = residentMb(server.child.pid!);
    await server.stop();
    console.log(`  idle resident memory ${IDLE_SECONDS} s after start: ${rss.toFixed(0)} MB (goal < 120 MB)`);
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
