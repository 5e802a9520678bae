import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

export function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

export interface SourceWrite {
  /** Relative to src/. */
  file: string;
  table: string;
  /** The exported function a caller reaches the write through. */
  functionName: string | undefined;
  body: string;
  /** Set when the write sits in a file-private helper: the helper's name. */
  via?: string;
}

interface TopLevelFunction {
  name: string;
  exported: boolean;
  start: number;
  body: string;
}

/**
 * Top-level functions, and statements compiled once (`const name = reusableQuery(…)` or
 * `reusableStatement(…)`), which act as private helpers. Such a statement runs to the next line
 * that starts a top-level declaration (not indented, not a closing bracket).
 */
function topLevelFunctions(text: string): TopLevelFunction[] {
  const functions = [...text.matchAll(/\n(export )?(?:async )?function (\w+)/g)].map((m) => {
    const end = text.indexOf('\n}\n', m.index);
    return { name: m[2]!, exported: m[1] !== undefined, start: m.index, body: text.slice(m.index, end === -1 ? undefined : end) };
  });
  const reusable = [...text.matchAll(/\nconst (\w+) = reusable(?:Query|Statement)\(/g)].map((m) => {
    const nextTopLevel = /\n(?![ \t)\]}\n])/g;
    nextTopLevel.lastIndex = m.index + 1;
    const end = nextTopLevel.exec(text)?.index;
    return { name: m[1]!, exported: false, start: m.index, body: text.slice(m.index, end) };
  });
  return [...functions, ...reusable].sort((a, b) => a.start - b.start);
}

/** The exported functions that reach a private helper, directly or through other private helpers. */
function exportedCallers(functions: TopLevelFunction[], helper: string, seen = new Set<string>()): TopLevelFunction[] {
  seen.add(helper);
  const callers = functions.filter((f) => f.name !== helper && new RegExp(`\\b${helper}\\(`).test(f.body));
  return callers.flatMap((f) => (f.exported ? [f] : seen.has(f.name) ? [] : exportedCallers(functions, f.name, seen)));
}

/**
 * Every Kysely write to one of `tables` in the server's sources, attributed to the exported function
 * that performs it. A write inside a file-private helper counts once for each exported function of
 * the file that calls the helper, so the duty (announce, record an event) falls on those callers.
 */
export function writesTo(tables: readonly string[], options: { skipFiles?: string[] } = {}): SourceWrite[] {
  const writes: SourceWrite[] = [];
  const pattern = new RegExp(`\\.(?:updateTable|deleteFrom|insertInto)\\('(${tables.join('|')})'\\)`, 'g');
  for (const file of sourceFiles()) {
    const relative = path.relative(SRC, file);
    if (options.skipFiles?.includes(relative)) continue;
    const text = readFileSync(file, 'utf8');
    const functions = topLevelFunctions(text);
    for (const match of text.matchAll(pattern)) {
      const enclosing = functions.filter((f) => f.start < match.index).at(-1);
      const table = match[1]!;
      if (!enclosing || enclosing.start + enclosing.body.length < match.index) {
        writes.push({ file: relative, table, functionName: undefined, body: '' });
      } else if (enclosing.exported) {
        writes.push({ file: relative, table, functionName: enclosing.name, body: enclosing.body });
      } else {
        const callers = exportedCallers(functions, enclosing.name);
        if (callers.length === 0) writes.push({ file: relative, table, functionName: undefined, body: '', via: enclosing.name });
        for (const caller of callers)
          writes.push({ file: relative, table, functionName: caller.name, body: caller.body, via: enclosing.name });
      }
    }
  }
  return writes;
}
