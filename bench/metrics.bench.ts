/**
 * The metrics' cost on GET /v1/me (goal, issue 37: at most 2 %): the app with metrics (prom-client
 * and its onResponse hook) against the same app without, in one run, served from a child process
 * and driven by autocannon. Rounds alternate between the variants so drift hits both alike; the
 * median of the per-round ratios of throughput and of the server's CPU per request is reported.
 * The access token's session is cached after the first request, as in production.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { RouteSeries } from '../packages/server/src/metrics/http-series.js';
import { loadLine, pidCpuSeconds } from './lib/machine.js';
import { median } from './lib/median.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

/**
 * What the hook does per answer, in this process: load-independent, where the HTTP rounds on a busy
 * shared machine are not. Compared with the server's CPU per GET /v1/me measured below.
 */
function cpuPerAnswer(): number {
  const series = new RouteSeries('GET', '/v1/me');
  const N = 2_000_000;
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) series.observe(i % 50 === 0 ? 401 : 200, (i % 100) / 10_000);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / N;
}

export async function run(): Promise<void> {
  const perAnswer = cpuPerAnswer();
  console.log(`  the hook's bookkeeping: ${perAnswer.toFixed(3)} µs CPU per answer (in process, ${(2e6).toLocaleString('en')} answers)`);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'metrics-server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  const { ports, accessToken } = JSON.parse(line) as { ports: Record<string, number>; accessToken: string };
  const names = ['baseline', 'metrics'];
  const measure = async (name: string, duration = SECONDS) => {
    const before = pidCpuSeconds(child.pid!);
    const result = await autocannon({
      url: `http://127.0.0.1:${ports[name]}/v1/me`,
      headers: { authorization: `Bearer ${accessToken}` },
      connections: CONNECTIONS,
      duration,
    });
    if (result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} answers were not 2xx`);
    return { rps: result.requests.average, cpuUs: ((pidCpuSeconds(child.pid!) - before) * 1e6) / Math.max(1, result.requests.total) };
  };
  try {
    console.log(`GET /v1/me, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${SECONDS} s per variant, alternating: without metrics, with`);
    for (const name of names) await measure(name, 1); // JIT and caches
    const rps: number[] = [];
    const cpu: number[] = [];
    const cpuOf: Record<string, number[]> = { baseline: [], metrics: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other.
      const order = round % 2 === 0 ? names : [...names].reverse();
      const got: Record<string, { rps: number; cpuUs: number }> = {};
      for (const name of order) got[name] = await measure(name);
      for (const name of names) cpuOf[name]!.push(got[name]!.cpuUs);
      rps.push(got.metrics!.rps / got.baseline!.rps);
      cpu.push(got.metrics!.cpuUs / got.baseline!.cpuUs);
      console.log(
        `  round ${round + 1} (${loadLine()}): without ${got.baseline!.rps.toFixed(0)} req/s ${got.baseline!.cpuUs.toFixed(1)} µs CPU, ` +
          `with ${got.metrics!.rps.toFixed(0)} req/s ${got.metrics!.cpuUs.toFixed(1)} µs CPU`,
      );
    }
    const baselineCpu = median(cpuOf.baseline!);
    console.log(
      `  the bookkeeping is ${((perAnswer / baselineCpu) * 100).toFixed(2)} % of the server's CPU per GET /v1/me without metrics (${baselineCpu.toFixed(1)} µs, median)`,
    );
    const cost = (1 - median(rps)) * 100;
    const cpuCost = (median(cpu) - 1) * 100;
    console.log(
      `  metrics cost on GET /v1/me: ${cost.toFixed(1)} % throughput, ${cpuCost.toFixed(1)} % server CPU per request ` +
        `(medians of the per-round ratios; goal ≤ 2 %: ${Math.max(cost, cpuCost) <= 2 ? 'met' : 'NOT met'})`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
