import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const EXAMPLE = fileURLToPath(new URL('..', import.meta.url));
const ROOT = join(EXAMPLE, '../..');
const NEXT = createRequire(join(EXAMPLE, 'package.json')).resolve('next/dist/bin/next');

function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

function run(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [NEXT, ...args], { cwd: EXAMPLE, env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env } });
}

/**
 * `next build`, unless the build in .next is newer than everything it is made of (the example's
 * sources and the built packages it imports): one build serves every run until something changes.
 * The build holds no key (they are read at run time), so it does not depend on the Gatehouse a run
 * starts.
 */
export async function buildExample(): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const packageBuild = spawn('npm', ['run', 'build', '-w', 'packages/nextjs'], { cwd: ROOT, stdio: 'ignore' });
    packageBuild.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`building @gatehouse/nextjs failed (${code})`))));
  });
  const sources = ['app', 'proxy.ts', 'next.config.mjs', 'package.json'].map((name) => newest(join(EXAMPLE, name)));
  const packages = ['nextjs', 'js', 'react', 'backend'].map((name) => newest(join(ROOT, 'packages', name, 'dist')));
  if (newest(join(EXAMPLE, '.next/BUILD_ID')) > Math.max(...sources, ...packages)) return;
  let output = '';
  const build = run(['build'], {});
  build.stdout!.on('data', (chunk) => (output += chunk));
  build.stderr!.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => build.on('exit', resolve));
  if (code !== 0) throw new Error(`next build failed:\n${output}`);
}

export interface RunningExample {
  url: string;
  close(): Promise<void>;
}

/** `next start` on the given port, as `npm start` runs it, with the example's variables. */
export async function startExample(port: number, env: Record<string, string>): Promise<RunningExample> {
  const child = run(['start'], { ...env, PORT: String(port) });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://localhost:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`next start exited:\n${output}`);
    const ready = await fetch(`${url}/`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 300) throw new Error(`next start did not answer:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
    },
  };
}
