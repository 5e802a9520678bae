/**
 * Test support for the SDKs' packaging: install a built SDK alone into a scratch app, the way npm
 * would, and typecheck or run code there. The scratch app sees the repository's third-party packages
 * (an app has its own express, @types/node…), but of @gatehouse/* only the SDK under test: the
 * contract is not installed, so anything in the SDK's dist/ that still needs it fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

export interface Result {
  status: number | null;
  output: string;
}

/** `npm run build` of the package (tsc, then its declarations made to stand alone). */
export function build(packageDir: string): void {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: packageDir, stdio: 'pipe' });
}

/** Every file of `dir`, recursively. */
export function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** A scratch app with the package's published files (package.json, README, dist) installed. */
export function scratchApp(packageDir: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-consumer-'));
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { name: string; files: string[] };
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@gatehouse'), { recursive: true });
  for (const entry of readdirSync(join(repo, 'node_modules'))) {
    if (entry === '@gatehouse' || entry.startsWith('.')) continue;
    symlinkSync(join(repo, 'node_modules', entry), join(modules, entry));
  }
  const installed = join(modules, manifest.name);
  cpSync(join(packageDir, 'package.json'), join(installed, 'package.json'));
  for (const published of manifest.files) cpSync(join(packageDir, published), join(installed, published), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs tsc over `files` (name → source) in `dir` with an application's strict settings. */
export function typecheck(dir: string, files: Record<string, string>, options: { lib: string[]; types: string[] }): Result {
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  const config = {
    compilerOptions: {
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      lib: options.lib,
      types: options.types,
      // The package's own declarations are checked too, not only their use.
      skipLibCheck: false,
      noEmit: true,
    },
    files: Object.keys(files),
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
  const run = spawnSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Runs an ES module in `dir` with node. */
export function runModule(dir: string, source: string): Result {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/**
 * A source file that proves each type of the package's dist/contract.d.ts equal to the contract's
 * own (both ways assignable and identical in every field), for tsc to check inside the repository.
 */
export function sameAsContractSource(distContract: string): string {
  const names = [...readFileSync(distContract, 'utf8').matchAll(/^export type (\w+) =/gm)].map((match) => match[1]!);
  const contract = join(repo, 'packages/contract/src/index.js');
  return [
    `import type * as Written from ${JSON.stringify(distContract.replace(/\.d\.ts$/, '.js'))};`,
    `import type * as Contract from ${JSON.stringify(contract)};`,
    'type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;',
    ...names.map((name) => `export const same${name}: Equal<Written.${name}, Contract.${name}> = true;`),
    '',
  ].join('\n');
}

export { repo };
