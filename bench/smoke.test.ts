import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Benches that cannot rot: every bench runs here briefly (`--smoke`), so a bench broken by a change
 * fails `npm test` instead of the next person who needs its numbers. Only that they run is checked;
 * timings are never asserted.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('every benchmark still runs (smoke)', () => {
  it('npm run bench -- --smoke runs each bench/*.bench.ts to the end', { timeout: 300_000 }, async () => {
    const { code, output } = await run(['bench/run.ts', '--smoke']);
    expect(output, output).not.toMatch(/Error|exited/);
    expect(code, output).toBe(0);
    const benches = readdirSync(here).filter((f) => f.endsWith('.bench.ts'));
    expect(benches.length).toBeGreaterThanOrEqual(5);
    for (const file of benches) expect(output).toContain(`== ${file}`);
    expect(output).toMatch(/round 1 \(load [\d.]+ \/ [\d.]+\)/);
  });

  it('npm run bench:sign-in-cpu runs', { timeout: 120_000 }, async () => {
    const { code, output } = await run(['bench/sign-in-cpu.ts'], { BENCH_SECONDS: '1', BENCH_WARM_UP_SECONDS: '1' });
    expect(code, output).toBe(0);
    expect(output).toMatch(/CPU/);
  });

  it('npm run bench:refresh-cpu runs', { timeout: 120_000 }, async () => {
    const { code, output } = await run(['bench/refresh-cpu.ts'], { BENCH_SECONDS: '1', BENCH_ROUNDS: '1', BENCH_REFRESH_CONNECTIONS: '4' });
    expect(code, output).toBe(0);
    expect(output).toMatch(/CPU per rotation: event loop/);
  });
});
