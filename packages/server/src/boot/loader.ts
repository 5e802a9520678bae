/**
 * Runs the server's bundle (dist/server.cjs) with the V8 code cache made at install, and maps stack
 * traces through the bundle's source map.
 *
 * Node 20 has no compile cache for ES modules (`module.enableCompileCache` came in Node 22), and
 * compiling the 2 MB bundle, then each function a start calls, was about a third of a start. A
 * CommonJS bundle run as a `vm.Script` can take V8's code cache; made after a start has run
 * (scripts/build.mjs), it holds those functions compiled. Node maps stack traces only for modules it
 * loaded itself, so the mapping is done here too.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, statSync, writeFileSync, type Stats } from 'node:fs';
import Module, { createRequire, SourceMap } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/**
 * Whether a start compiled with the cache: `mismatched` is another build's (or a damaged file),
 * `rejected` was made by another Node.js or under other V8 flags; `unreadable` could not be read.
 */
export type CodeCacheState = 'used' | 'missing' | 'unreadable' | 'mismatched' | 'rejected';

export interface CompiledBundle {
  readonly file: string;
  readonly script: vm.Script;
  readonly source: Buffer;
  readonly codeCache: CodeCacheState;
}

const HASH_BYTES = 32;

// On a line of its own, so that the bundle's lines keep their numbers (lineOffset) for the source
// map. Strict, as the ES modules of the sources are: a write to a frozen object must throw.
const WRAPPER_HEAD = "(function (exports, require, module, __filename, __dirname) { 'use strict';\n";

export function codeCacheFileOf(bundleFile: string): string {
  return `${bundleFile}.v8cache`;
}

/**
 * The cache file starts with a hash of the bundle and the cache together. V8 checks only the
 * source's length, so another build of the same length would run this cache's code; and it trusts
 * the cache's bytes, so a damaged one would crash the start. Hashing both costs about 3 ms.
 */
function hashOf(source: Buffer, cache: Buffer): Buffer {
  return createHash('sha256').update(source).update(cache).digest();
}

/** Compiles the bundle, with its code cache when there is one for exactly this bundle. */
export function compileBundle(file: string): CompiledBundle {
  const source = readFileSync(file);
  let cachedData: Buffer | undefined;
  let codeCache: CodeCacheState = 'missing';
  try {
    const stored = readFileSync(codeCacheFileOf(file));
    const cache = stored.subarray(HASH_BYTES);
    if (stored.length > HASH_BYTES && stored.subarray(0, HASH_BYTES).equals(hashOf(source, cache))) cachedData = cache;
    else codeCache = 'mismatched';
  } catch (error) {
    // A cache only saves time: whatever keeps it from being read, the start goes on without it.
    codeCache = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  const script = new vm.Script(`${WRAPPER_HEAD}${source.toString('utf8')}\n})`, {
    filename: file,
    lineOffset: -1,
    // No importModuleDynamically: Node's option for it is lost on code from the cache, so
    // import() has no loader here, and the build refuses it (scripts/build.mjs).
    ...(cachedData ? { cachedData } : {}),
  });
  if (cachedData) codeCache = script.cachedDataRejected ? 'rejected' : 'used';
  return { file, script, source, codeCache };
}

/** Runs a compiled bundle as Node runs a CommonJS module; returns its exports. */
export function runBundle(bundle: CompiledBundle): unknown {
  const module = new Module(bundle.file);
  module.filename = bundle.file;
  const run = bundle.script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(bundle.file), module, bundle.file, path.dirname(bundle.file));
  return module.exports;
}

/**
 * Writes the code cache of everything V8 has compiled of the bundle so far, behind the hash;
 * written aside and renamed, so a start never reads half a file.
 */
export function writeCodeCache(bundle: CompiledBundle): void {
  const target = codeCacheFileOf(bundle.file);
  const aside = `${target}.${process.pid}.tmp`;
  const cache = bundle.script.createCachedData();
  writeFileSync(aside, Buffer.concat([hashOf(bundle.source, cache), cache]));
  renameSync(aside, target);
}

interface MappedEntry {
  originalSource?: string;
  originalLine?: number;
  originalColumn?: number;
}

/** Node's own errors head their traces with their code, as Node's formatter does. */
function isNodeError(error: object): boolean {
  for (let at: object | null = error; at; at = Object.getPrototypeOf(at)) {
    if (Object.getOwnPropertySymbols(at).some((symbol) => symbol.description === 'kIsNodeError')) return true;
  }
  return false;
}

function headerOf(error: unknown): string {
  try {
    if (error !== null && typeof error === 'object' && isNodeError(error)) {
      const { name, code, message } = error as { name: unknown; code: unknown; message: unknown };
      return `${String(name)} [${String(code)}]: ${String(message)}`;
    }
    return Error.prototype.toString.call(error);
  } catch {
    return 'Error';
  }
}

/**
 * Formats a stack trace as Node does, with each frame in the bundle at its place in the TypeScript
 * sources. The map is read at the first such frame, not at start, and only if it is still the one
 * that was beside the bundle at start (a rebuild meanwhile would map to the wrong places).
 */
export function sourceMappedStackTrace(bundleFile: string): (error: unknown, callSites: NodeJS.CallSite[]) => string {
  const mapFile = `${bundleFile}.map`;
  const identity = (stats: Stats | undefined) => (stats ? `${stats.size}:${stats.mtimeMs}:${stats.ino}` : undefined);
  const atStart = identity(statSync(mapFile, { throwIfNoEntry: false }));
  let map: SourceMap | null | undefined;
  const sourceMap = (): SourceMap | null => {
    if (map === undefined) {
      try {
        const text = readFileSync(mapFile, 'utf8');
        map = atStart !== undefined && identity(statSync(mapFile)) === atStart ? new SourceMap(JSON.parse(text)) : null;
      } catch {
        map = null; // a trace without the map still beats no trace
      }
    }
    return map;
  };
  const frameOf = (site: NodeJS.CallSite): string => {
    const text = String(site);
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    if (site.getFileName() !== bundleFile || line === null || column === null) return text;
    const entry = sourceMap()?.findEntry(line - 1, column - 1) as MappedEntry | undefined;
    if (typeof entry?.originalSource !== 'string' || entry.originalLine === undefined || entry.originalColumn === undefined) return text;
    const location = `${bundleFile}:${line}:${column}`;
    const at = text.lastIndexOf(location);
    if (at < 0) return text;
    const original = `${path.resolve(path.dirname(mapFile), entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
    return `${text.slice(0, at)}${original}${text.slice(at + location.length)}`;
  };
  return (error, callSites) => {
    let frames: string;
    try {
      frames = callSites.map((site) => `\n    at ${frameOf(site)}`).join('');
    } catch {
      frames = callSites.map((site) => `\n    at ${String(site)}`).join('');
    }
    return headerOf(error) + frames;
  };
}
