import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-writes.js';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Each `fp(…)` / `fp<…>(…)` call in `text`, from `fp` to its closing parenthesis. */
function pluginCalls(text: string): string[] {
  const calls: string[] = [];
  for (const match of text.matchAll(/\bfp\s*(<[^>]*>)?\s*\(/g)) {
    let depth = 0;
    for (let i = match.index + match[0].length - 1; i < text.length; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) {
        calls.push(text.slice(match.index, i + 1));
        break;
      }
    }
  }
  return calls;
}

/**
 * fastify-plugin names a plugin without `name` by throwing an Error and reading its stack. In the
 * built server that stack is mapped back to the sources, which parses the 2 MB source map at start:
 * a fifth of a start's CPU (docs/performance.md, Start-up).
 */
describe('every fastify-plugin of the server has a name', () => {
  it('no fp(…) call leaves the name to a stack trace', () => {
    const unnamed: string[] = [];
    let seen = 0;
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(file, 'utf8');
      if (!text.includes("from 'fastify-plugin'")) continue;
      for (const call of pluginCalls(text)) {
        seen++;
        if (!/\bname:\s*'[^']+'/.test(call)) unnamed.push(`${path.relative(SRC, file)}: ${call.slice(0, 60)}…`);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(7);
    expect(unnamed).toEqual([]);
  });

  it('finds a plugin without a name (the check is live)', () => {
    expect(pluginCalls("export const x = fp(async (app) => { app.get('/', () => ({})); });")).toHaveLength(1);
    expect(pluginCalls("export const x = fp<{ a: number }>(async (app) => {}, { name: 'x' });")[0]).toContain("name: 'x'");
  });
});
