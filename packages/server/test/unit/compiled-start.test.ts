import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { serverDir, serverProcessArgs } from '../helpers/built-server.js';

const rootPackage = JSON.parse(readFileSync(path.resolve(serverDir, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
const serverPackage = JSON.parse(readFileSync(path.join(serverDir, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};

describe('npm start runs the server built at install', () => {
  const words = rootPackage.scripts.start!.split(/\s+/);

  it('is plain node on the built JavaScript: no transpiler or loader at run time', () => {
    expect(words[0]).toBe('node');
    expect(words.at(-1)).toBe('packages/server/dist/main.js');
    expect(words.filter((w) => /tsx|ts-node|--import|--loader|--require|^-r$|strip-types|transform-types/.test(w))).toEqual([]);
    // tsx may serve tests and benches, never the running server.
    expect(Object.keys(serverPackage.dependencies)).not.toContain('tsx');
  });

  it('is built by install (prepare), not by start', () => {
    expect(serverPackage.scripts.prepare).toMatch(/\bbuild\b/);
    expect(rootPackage.scripts.start).not.toMatch(/build/);
  });

  it('runs with source maps that take a stack trace back to the TypeScript sources', () => {
    expect(words).toContain('--enable-source-maps');
    const main = readFileSync(path.join(serverDir, 'dist/main.js'), 'utf8');
    const map = new SourceMap(JSON.parse(readFileSync(path.join(serverDir, 'dist/main.js.map'), 'utf8')));
    // Where a known function of the sources sits in the bundle, and where the map says it came from.
    const at = main.indexOf('async function searchSqlite(');
    expect(at).toBeGreaterThan(0);
    const lines = main.slice(0, at).split('\n');
    const entry = map.findEntry(lines.length - 1, lines.at(-1)!.length) as { originalSource?: string; originalLine?: number };
    expect(entry.originalSource).toMatch(/(^|\/)src\/identity\/queries\.ts$/);
    const source = readFileSync(path.join(serverDir, 'src/identity/queries.ts'), 'utf8').split('\n');
    expect(source[entry.originalLine!]).toContain('async function searchSqlite(');
  });

  it('is what the tests that start a server process run', () => {
    expect(serverProcessArgs().map((a) => (path.isAbsolute(a) ? path.relative(path.resolve(serverDir, '../..'), a) : a))).toEqual(
      words.slice(1),
    );
  });
});
