import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileBundle } from '../../src/boot/loader.js';
import { serverDir, serverProcessArgs } from '../helpers/built-server.js';

const rootPackage = JSON.parse(readFileSync(path.resolve(serverDir, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
const serverPackage = JSON.parse(readFileSync(path.join(serverDir, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};

describe('npm start runs the server built at install', () => {
  const words = rootPackage.scripts.start!.split(/\s+/);

  it('is plain node on the built JavaScript: no transpiler or loader at run time', () => {
    // No flags either: V8 refuses a code cache made under other flags (src/boot/loader.ts).
    expect(words).toEqual(['node', 'packages/server/dist/main.js']);
    // tsx may serve tests and benches, never the running server.
    expect(Object.keys(serverPackage.dependencies)).not.toContain('tsx');
  });

  it('is built by install (prepare), not by start', () => {
    expect(serverPackage.scripts.prepare).toMatch(/\bbuild\b/);
    expect(rootPackage.scripts.start).not.toMatch(/build/);
  });

  it('has a map that takes the bundle back to the TypeScript sources', () => {
    const main = readFileSync(path.join(serverDir, 'dist/server.cjs'), 'utf8');
    const map = new SourceMap(JSON.parse(readFileSync(path.join(serverDir, 'dist/server.cjs.map'), 'utf8')));
    // Where a known function of the sources sits in the bundle, and where the map says it came from.
    const at = main.indexOf('async function searchSqlite(');
    expect(at).toBeGreaterThan(0);
    const lines = main.slice(0, at).split('\n');
    const entry = map.findEntry(lines.length - 1, lines.at(-1)!.length) as { originalSource?: string; originalLine?: number };
    expect(entry.originalSource).toMatch(/(^|\/)src\/identity\/queries\.ts$/);
    const source = readFileSync(path.join(serverDir, 'src/identity/queries.ts'), 'utf8').split('\n');
    expect(source[entry.originalLine!]).toContain('async function searchSqlite(');
  });

  it('is strict, as the ES modules of the sources are (a write to a frozen object throws)', () => {
    expect(readFileSync(path.join(serverDir, 'dist/server.cjs'), 'utf8')).toMatch(/^'use strict';/);
  });

  it('has a code cache, made at install, that this Node.js takes for this bundle', () => {
    expect(compileBundle(path.join(serverDir, 'dist/server.cjs')).codeCache).toBe('used');
  });

  it('is what the tests that start a server process run', () => {
    expect(serverProcessArgs().map((a) => (path.isAbsolute(a) ? path.relative(path.resolve(serverDir, '../..'), a) : a))).toEqual(
      words.slice(1),
    );
  });
});
