/**
 * Rate-limiter overhead: GET /v1/environment (publishable key) with the limiter against the same
 * route without it, measured in one run. Goals (issue 22): the memory store costs at most 3 %, the
 * Redis store at most 20 % co-located. Served over HTTP from a child process and driven by
 * autocannon: throughput and the server's CPU per request, and the co-located redis-server's CPU.
 * Rounds alternate between variants so drift hits all alike; the median of the per-round ratios is
 * reported. (Not through `app.inject`: each injected request leaves about 10 KB on the heap, in a bare
 * Fastify app too, so later rounds pay for the garbage of earlier ones.)
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { MemoryRateLimitStore } from '../packages/server/src/ratelimit/memory.js';
import { RedisRateLimitStore } from '../packages/server/src/ratelimit/redis.js';
import { loadLine, pidCpuSeconds, processCpuSeconds } from './lib/machine.js';
import { median } from './lib/median.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Server {
  ports: Record<string, number>;
  publishableKey: string;
  pid: number;
}

async function startServer(): Promise<{ server: Server; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'ratelimit-server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { server: { ...(JSON.parse(line) as Server), pid: child.pid! }, stop: () => child.kill('SIGTERM') };
}

async function measure(
  port: number,
  publishableKey: string,
  serverPid: number,
): Promise<{ rps: number; p99: number; non2xx: number; redisCpuUs: number; serverCpuUs: number }> {
  const redisBefore = processCpuSeconds('redis-server');
  const serverBefore = pidCpuSeconds(serverPid);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/v1/environment`,
    headers: { authorization: `Bearer ${publishableKey}` },
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  // What the co-located redis-server spent per request: its share of the cores the server lost.
  const redisCpuUs = ((processCpuSeconds('redis-server') - redisBefore) * 1e6) / Math.max(1, result.requests.total);
  // The server's own CPU per request: steadier than throughput on a shared machine.
  const serverCpuUs = ((pidCpuSeconds(serverPid) - serverBefore) * 1e6) / Math.max(1, result.requests.total);
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx, redisCpuUs, serverCpuUs };
}

/** CPU this process spends per limiter call, which does not depend on how busy the machine is. */
async function cpuPerHit(): Promise<void> {
  const memory = new MemoryRateLimitStore({ clock: Date.now });
  const start = process.cpuUsage();
  const N = 1_000_000;
  for (let i = 0; i < N; i++) memory.hit(`env_${i % 1000}`, 1e9);
  const used = process.cpuUsage(start);
  console.log(`  memory store: ${((used.user + used.system) / N).toFixed(2)} µs CPU per call (1000 environments)`);
  if (!process.env.REDIS_URL) return;
  const redis = new Redis(process.env.REDIS_URL, { enableAutoPipelining: true });
  const prefix = `ghbench:${process.pid}:`;
  const store = new RedisRateLimitStore({ redis, prefix });
  const get = new Redis(process.env.REDIS_URL, { enableAutoPipelining: true });
  const M = 20_000;
  const drive = async (call: (i: number) => Promise<unknown>) => {
    const began = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < M; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => call(i + j)));
    const cpu = process.cpuUsage(began);
    return { cpu: (cpu.user + cpu.system) / M, rate: M / ((performance.now() - t0) / 1000) };
  };
  await drive((i) => store.hit(`env_${i % 100}`, 1e9));
  const plain = await drive(() => get.get(`${prefix}none`));
  const script = await drive((i) => store.hit(`env_${i % 100}`, 1e9));
  console.log(
    `  Redis store:  ${script.cpu.toFixed(1)} µs CPU per call in Node (a bare GET costs ${plain.cpu.toFixed(1)} µs), ` +
      `${script.rate.toFixed(0)} calls/s from one connection with 10 in flight`,
  );
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  get.disconnect();
}

export async function run(): Promise<void> {
  await cpuPerHit();
  const { server, stop } = await startServer();
  try {
    const names = Object.keys(server.ports);
    console.log(
      `GET /v1/environment, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${SECONDS} s per variant: ${names.join(', ')}` +
        (server.ports.redis ? '' : ' (set REDIS_URL to add Redis)'),
    );
    // Warm up JIT and caches.
    for (const name of names)
      await autocannon({
        url: `http://127.0.0.1:${server.ports[name]}/v1/environment`,
        headers: { authorization: `Bearer ${server.publishableKey}` },
        connections: CONNECTIONS,
        duration: 1,
      });
    const results: Record<string, Awaited<ReturnType<typeof measure>>[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const load = loadLine();
      const line: string[] = [];
      for (const name of names) {
        const r = await measure(server.ports[name]!, server.publishableKey, server.pid);
        (results[name] ??= []).push(r);
        line.push(`${name} ${(r.rps / results.baseline!.at(-1)!.rps).toFixed(3)}`);
      }
      console.log(`  round ${round + 1} (${load}): ${line.join(', ')}`);
    }
    const ratios = (name: string, of: (r: (typeof results)[string][number]) => number) =>
      median(results[name]!.map((r, i) => of(r) / of(results.baseline![i]!)));
    for (const name of names) {
      const rps = median(results[name]!.map((r) => r.rps));
      const p99 = median(results[name]!.map((r) => r.p99));
      const refused = results[name]!.reduce((n, r) => n + r.non2xx, 0);
      const redisCpu = median(results[name]!.map((r) => r.redisCpuUs));
      const serverCpu = median(results[name]!.map((r) => r.serverCpuUs));
      const cpuRatio = ratios(name, (r) => r.serverCpuUs);
      const goal = name === 'memory' ? 0.97 : name === 'redis' ? 0.8 : undefined;
      const ratio = ratios(name, (r) => r.rps);
      console.log(
        `  ${name.padEnd(9)} ${rps.toFixed(0).padStart(7)} req/s  p99 ${String(p99).padStart(3)} ms  ratio ${ratio.toFixed(3)}` +
          (goal ? `  (goal ≥ ${goal}: ${ratio >= goal ? 'met' : 'NOT met'})` : '') +
          `  server ${serverCpu.toFixed(1)} µs CPU per request` +
          (name === 'baseline' ? '' : ` (${cpuRatio >= 1 ? '+' : ''}${((cpuRatio - 1) * 100).toFixed(1)} %, median of the rounds)`) +
          (name === 'redis' ? `, redis-server ${redisCpu.toFixed(1)} µs` : '') +
          (refused ? `  non-2xx: ${refused}` : ''),
      );
    }
  } finally {
    stop();
  }
}
