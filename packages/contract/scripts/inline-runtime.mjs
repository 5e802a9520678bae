#!/usr/bin/env node
/**
 * Carries the contract's runtime modules inside an SDK's build: `node inline-runtime.mjs <dist>`.
 *
 * The contract is private, so an installed SDK cannot import it. A few of its modules are code that
 * every client must run alike (the error-body parser); the SDKs import them as
 * `@gatehouse/contract/<name>`, and this transpiles each such module into `<dist>/contract-<name>.js`
 * and points the emitted JavaScript at it. Those modules import types only, so nothing else follows.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const dist = resolve(process.argv[2] ?? 'dist');
const sources = join(dirname(fileURLToPath(import.meta.url)), '../src');
const SPECIFIER = /(['"])@gatehouse\/contract\/([a-z-]+)\1/g;

const emitted = [];
(function walk(dir) {
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    if (item.isDirectory()) walk(path);
    else if (/\.(js|d\.ts)$/.test(item.name)) emitted.push(path);
  }
})(dist);

const inlined = new Set();
for (const file of emitted) {
  const text = readFileSync(file, 'utf8');
  if (!SPECIFIER.test(text)) continue;
  if (file.endsWith('.d.ts')) throw new Error(`${file}: a declaration names a contract runtime module; keep it internal to the SDK.`);
  const rewritten = text.replace(SPECIFIER, (_match, quote, name) => {
    inlined.add(name);
    let target = relative(dirname(file), join(dist, `contract-${name}.js`));
    if (!target.startsWith('.')) target = `./${target}`;
    return `${quote}${target}${quote}`;
  });
  writeFileSync(file, rewritten);
}

for (const name of inlined) {
  const source = readFileSync(join(sources, `${name}.ts`), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: `${name}.ts`,
  });
  if (/\bimport\s*(?!type)[^;]*from\s*['"]/.test(outputText.replace(/^\s*import\s+type[^;]*;/gm, ''))) {
    throw new Error(`contract/src/${name}.ts imports code; only type imports can be inlined.`);
  }
  writeFileSync(join(dist, `contract-${name}.js`), `// Generated from the Gatehouse contract (src/${name}.ts) by inline-runtime.mjs.\n${outputText}`);
}
console.log(`inline-runtime: ${inlined.size} contract module(s) carried into ${relative(process.cwd(), dist)}`);
