import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { codeCacheFileOf, compileBundle, runBundle, sourceMappedStackTrace } from '../../src/boot/loader.js';
import { serverDir, serverProcessArgs } from '../helpers/built-server.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-loader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Bundles a TypeScript fixture as the server is bundled: CommonJS, minified (so the bundle's lines and columns are not the source's), with a map. */
function bundleTypeScript(source: string, outfile: string, banner?: string): void {
  buildSync({
    ...(banner ? { banner: { js: banner } } : {}),
    entryPoints: [source],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    sourcemap: 'linked',
    minify: true,
    keepNames: true,
    logLevel: 'silent',
  });
}

/** What `fails` throws, with its call sites as V8 hands them to Error.prepareStackTrace. */
function thrownWithCallSites(fails: () => unknown): { error: unknown; callSites: NodeJS.CallSite[] } {
  let callSites: NodeJS.CallSite[] = [];
  const original = Error.prepareStackTrace;
  Error.prepareStackTrace = (_, sites) => (callSites = sites);
  try {
    fails();
  } catch (error) {
    void (error as Error).stack;
    return { error, callSites };
  } finally {
    Error.prepareStackTrace = original;
  }
  throw new Error('expected a throw');
}

let fixtures = 0;
function bundleFile(source: string): string {
  const file = path.join(dir, `bundle-${++fixtures}.cjs`);
  writeFileSync(file, source);
  return file;
}

/**
 * Compiles and runs a bundle with the built loader (dist/loader.js) in a process of its own, as a
 * start does: within one process V8 reuses what it compiled already and never reads the cache.
 */
function start(file: string, options: { writeCache?: boolean; nodeOptions?: string[] } = {}): { codeCache: string; exports: unknown } {
  serverProcessArgs(); // fails when dist/ is older than the sources
  const loader = pathToFileURL(path.join(serverDir, 'dist/loader.js')).href;
  const program = [
    `import { compileBundle, runBundle, writeCodeCache } from ${JSON.stringify(loader)};`,
    `const bundle = compileBundle(${JSON.stringify(file)});`,
    'const exports = runBundle(bundle);',
    options.writeCache ? 'writeCodeCache(bundle);' : '',
    'process.stdout.write(JSON.stringify({ codeCache: bundle.codeCache, exports }));',
  ].join('\n');
  const child = spawnSync(process.execPath, [...(options.nodeOptions ?? []), '--input-type=module', '-e', program], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  if (child.status !== 0) throw new Error(`the start failed (${child.status ?? child.signal}): ${child.stderr}`);
  return JSON.parse(child.stdout) as { codeCache: string; exports: unknown };
}

describe('the start-up loader (src/boot/loader.ts)', () => {
  it('runs a bundle as a CommonJS module, compiling it when it has no cache', () => {
    const file = bundleFile("exports.answer = 6 * 7; exports.file = __filename; exports.sep = require('node:path').sep;");
    expect(start(file)).toEqual({ codeCache: 'missing', exports: { answer: 42, file, sep: path.sep } });
  });

  it('starts without the cache when it cannot be read', () => {
    const file = bundleFile('exports.value = "compiled";');
    mkdirSync(codeCacheFileOf(file)); // reading a directory fails (EISDIR), as root too
    expect(start(file)).toEqual({ codeCache: 'unreadable', exports: { value: 'compiled' } });
  });

  it('uses the cache that a run of the bundle wrote', () => {
    const file = bundleFile('function twice(n) { return n * 2; } exports.answer = twice(21);');
    start(file, { writeCache: true });
    expect(start(file)).toEqual({ codeCache: 'used', exports: { answer: 42 } });
  });

  it("never runs another build's cache, even when the bundles are the same length (V8 checks only the length)", () => {
    const file = bundleFile('function pick() { return "old"; } exports.value = pick();');
    start(file, { writeCache: true });
    writeFileSync(file, 'function pick() { return "new"; } exports.value = pick();');
    expect(start(file)).toEqual({ codeCache: 'mismatched', exports: { value: 'new' } });
  });

  it('compiles the bundle when the cache is damaged (V8 would crash on it)', () => {
    const file = bundleFile('function pick() { return "compiled"; } exports.value = pick();');
    start(file, { writeCache: true });
    const stored = readFileSync(codeCacheFileOf(file));
    stored[stored.length - 8]! ^= 0xff; // in V8's payload, past its header
    writeFileSync(codeCacheFileOf(file), stored);
    expect(start(file)).toEqual({ codeCache: 'mismatched', exports: { value: 'compiled' } });
  });

  it('compiles the bundle when V8 refuses the cache (made under other V8 flags)', () => {
    const file = bundleFile('exports.value = "compiled";');
    start(file, { writeCache: true });
    expect(start(file, { nodeOptions: ['--stack-size=900'] })).toEqual({ codeCache: 'rejected', exports: { value: 'compiled' } });
  });
});

describe('stack traces of the bundle', () => {
  const source = path.join(dir, 'parse.ts');
  writeFileSync(
    source,
    [
      'export function parse(input: string): number {',
      '  if (!input) {',
      "    throw new Error('empty input');",
      '  }',
      '  return input.length;',
      '}',
      '',
    ].join('\n'),
  );
  const file = path.join(dir, 'parse.cjs');
  bundleTypeScript(source, file);

  it('point at the TypeScript sources for frames in the bundle, and leave the other frames as they are', () => {
    const { parse } = runBundle(compileBundle(file)) as { parse: (input: string) => number };
    const { error, callSites } = thrownWithCallSites(() => parse(''));
    const lines = sourceMappedStackTrace(file)(error, callSites).split('\n');
    expect(lines[0]).toBe('Error: empty input');
    expect(lines[1]).toMatch(new RegExp(`^    at parse \\(${source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+\\)$`));
    expect(lines[2]).toContain(`${path.basename(import.meta.url.replace('file://', ''))}:`);
    expect(lines.slice(1).join('\n')).not.toContain(file);
  });

  it("head Node's own errors with their code, as Node does", () => {
    const { error } = thrownWithCallSites(() => readFileSync({} as string));
    expect(sourceMappedStackTrace(file)(error, [])).toMatch(/^TypeError \[ERR_INVALID_ARG_TYPE\]: The "path" argument/);
  });

  it('are left unmapped when the map changed since start (a rebuild would map to the wrong places)', () => {
    const { parse } = runBundle(compileBundle(file)) as { parse: (input: string) => number };
    const format = sourceMappedStackTrace(file);
    const later = new Date(Date.now() + 60_000);
    utimesSync(`${file}.map`, later, later);
    const { error, callSites } = thrownWithCallSites(() => parse(''));
    const trace = format(error, callSites);
    expect(trace).toContain(`${file}:`);
    expect(trace).not.toContain(source);
  });
});

describe('npm start (dist/main.js) on a bundle of its own', () => {
  /** The built loader beside a small bundle named as the server's, run as `npm start` runs it. */
  function startBesideBundle(lines: string[]): { status: number | null; stdout: string; stderr: string; source: string; bundle: string } {
    serverProcessArgs(); // fails when dist/ is older than the sources
    const home = mkdtempSync(path.join(dir, 'dist-'));
    for (const name of ['main.js', 'loader.js']) copyFileSync(path.join(serverDir, 'dist', name), path.join(home, name));
    const source = path.join(home, 'crash.ts');
    writeFileSync(source, lines.join('\n'));
    const bundle = path.join(home, 'server.cjs');
    // A statement before esbuild's own "use strict", as the server's banner is: the loader's
    // wrapper must make the bundle strict by itself.
    bundleTypeScript(source, bundle, 'const firstStatement = 1;');
    const child = spawnSync(process.execPath, [path.join(home, 'main.js')], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    return { status: child.status, stdout: child.stdout, stderr: child.stderr, source, bundle };
  }

  it('runs it strict, says the code cache is missing, and reports a crash with a trace into the sources', () => {
    const run = startBesideBundle([
      'function strictMode(this: unknown): boolean {',
      '  return this === undefined;',
      '}',
      'export function explode(): never {',
      "  throw new Error('boom');",
      '}',
      'process.stdout.write(`strict: ${strictMode()}\\n`);',
      'setTimeout(explode, 0);',
      '',
    ]);
    expect(run.stdout).toBe('strict: true\n');
    expect(run.stderr).toContain(`Note: ${run.bundle}.v8cache is missing`);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`Error: boom\n    at Timeout.explode [as _onTimeout] (${run.source}:5:9)\n`);
    // Not the bundle's line that threw, which Node would print above the trace.
    expect(run.stderr).not.toContain(run.bundle + ':');
  });
});
