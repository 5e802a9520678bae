/**
 * `npm start`: dist/main.js. Runs the server's bundle (src/main.ts, built to dist/server.cjs) with
 * the code cache made at install; see loader.ts.
 */
import { fileURLToPath } from 'node:url';
import { codeCacheFileOf, compileBundle, runBundle, sourceMappedStackTrace, writeCodeCache, type CodeCacheState } from './loader.js';

const why: Record<Exclude<CodeCacheState, 'used'>, string> = {
  missing: 'is missing',
  unreadable: 'could not be read',
  mismatched: 'belongs to another build (or is damaged)',
  rejected: 'was made by another version of Node.js, or under other V8 flags (NODE_OPTIONS)',
};

function start(): void {
  const file = fileURLToPath(new URL('./server.cjs', import.meta.url));
  // The build starts the server once to make the cache (scripts/build.mjs), and asks for it over IPC.
  const makingCodeCache = process.env.GATEHOUSE_MAKING_CODE_CACHE === '1' && typeof process.send === 'function';

  Error.prepareStackTrace = sourceMappedStackTrace(file);
  // Node would print the line that threw from the bundle (minified: lines of up to 240 KB) above
  // the trace; the trace says where it is in the sources.
  process.on('uncaughtException', (error) => {
    process.stderr.write(`${error instanceof Error && error.stack ? error.stack : String(error)}\n`);
    process.exit(1);
  });
  const bundle = compileBundle(file);
  if (bundle.codeCache !== 'used' && !makingCodeCache) {
    process.stderr.write(
      `Note: ${codeCacheFileOf(file)} ${why[bundle.codeCache]}, so this start compiles the server (about a quarter of a second more). ` +
        '`npm run build -w packages/server` makes it again.\n',
    );
  }
  runBundle(bundle);

  if (makingCodeCache) {
    process.on('message', (message) => {
      if (message !== 'write-code-cache') return;
      try {
        writeCodeCache(bundle);
        process.send!({ written: true });
      } catch (error) {
        process.send!({ written: false, error: error instanceof Error ? error.message : String(error) });
      }
    });
  }
}

start();
