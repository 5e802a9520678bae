#!/usr/bin/env node
/**
 * Makes an SDK's emitted declarations stand alone: `node inline-declarations.mjs <dist>`.
 *
 * The SDKs import the contract's types only (`import type`), so their JavaScript never loads
 * @gatehouse/contract, but tsc's .d.ts files still name it. This writes the types those files use,
 * written out in full (no TypeBox, no contract), to <dist>/contract.d.ts and points the .d.ts files
 * at it. A user installs the SDK alone and gets the same types the repository checks against the
 * contract.
 *
 * The route tables (src/routes.ts, src/route-bodies.ts) are plain TypeScript, generic helpers included: those are copied
 * as written, and the contract types they name are written out like the rest.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SPECIFIER = '@gatehouse/contract';
const dist = resolve(process.argv[2] ?? 'dist');
const entry = join(dirname(fileURLToPath(import.meta.url)), '../src/index.ts');

const declarations = [];
(function walk(dir) {
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    if (item.isDirectory()) walk(path);
    else if (item.name.endsWith('.d.ts') && path !== join(dist, 'contract.d.ts')) declarations.push(path);
  }
})(dist);

// Every name the declarations take from the contract (imports and re-exports are type-only).
const needed = new Set();
const quoted = `['"]${SPECIFIER.replace('/', '\\/')}['"]`;
const clause = new RegExp(`(?:import|export)\\s+(?:type\\s+)?\\{([^}]*)\\}\\s+from\\s+${quoted}`, 'g');
for (const file of declarations) {
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(clause)) {
    for (const part of match[1].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0];
      if (name) needed.add(name);
    }
  }
  if (new RegExp(`import\\s*\\*|import\\(\\s*${quoted}`).test(text) && text.includes(SPECIFIER)) {
    throw new Error(`${file}: only named imports from ${SPECIFIER} can be inlined.`);
  }
}

const program = ts.createProgram([entry], {
  strict: true,
  exactOptionalPropertyTypes: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  skipLibCheck: true,
  noEmit: true,
});
const checker = program.getTypeChecker();
const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry));
const exports = new Map(checker.getExportsOfModule(moduleSymbol).map((symbol) => [symbol.name, symbol]));
const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;

/** The type written out member by member, so no name of the contract or of TypeBox is left in it. */
function written(type, optional = false) {
  if (type.isUnion()) {
    // An optional property's type carries `undefined` for "absent"; `?` says that already.
    const members = type.types.filter((member) => !(optional && member.flags & ts.TypeFlags.Undefined));
    const booleans = members.filter((member) => member.flags & ts.TypeFlags.BooleanLiteral);
    const rest = members.filter((member) => !(member.flags & ts.TypeFlags.BooleanLiteral)).map((member) => written(member));
    const shown = booleans.length === 2 ? ['boolean', ...rest] : [...booleans.map((member) => written(member)), ...rest];
    return shown.join(' | ');
  }
  if (checker.isArrayType(type)) return `Array<${written(checker.getTypeArguments(type)[0])}>`;
  if (!(type.flags & ts.TypeFlags.Object) || type.getCallSignatures().length > 0) return checker.typeToString(type, undefined, flags);
  const index = checker.getIndexInfosOfType(type).map((info) => `[key: ${checker.typeToString(info.keyType)}]: ${written(info.type)}`);
  const members = type.getProperties().map((property) => {
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    const key = /^[A-Za-z_$][\w$]*$/.test(property.name) ? property.name : JSON.stringify(property.name);
    return `${key}${optional ? '?' : ''}: ${written(checker.getTypeOfSymbol(property), optional)}`;
  });
  return `{ ${[...index, ...members].join('; ')} }`;
}

/** Modules of plain TypeScript types, copied as written rather than expanded. */
const VERBATIM = new Set(['routes.ts', 'route-bodies.ts']);
const isVerbatim = (symbol) => {
  const declaration = symbol.declarations?.[0];
  return declaration !== undefined && VERBATIM.has(declaration.getSourceFile().fileName.split('/').pop());
};

/** The contract's names a copied declaration refers to: they are needed too. */
function namesIn(node, found = new Set()) {
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && exports.has(node.typeName.text)) found.add(node.typeName.text);
  if (ts.isExpressionWithTypeArguments(node) && ts.isIdentifier(node.expression) && exports.has(node.expression.text)) {
    found.add(node.expression.text);
  }
  ts.forEachChild(node, (child) => void namesIn(child, found));
  return found;
}

const lines = [
  '// Generated by packages/contract/scripts/inline-declarations.mjs from the Gatehouse contract: the',
  '// shapes the server answers with and the request bodies it takes, written out in full.',
  '',
];
const contractType = (name) => {
  let symbol = exports.get(name);
  if (!symbol) throw new Error(`${SPECIFIER} exports no "${name}".`);
  if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  if (!(symbol.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface))) {
    throw new Error(`"${name}" of ${SPECIFIER} is not a type; the SDKs import types only.`);
  }
  return symbol;
};
// A copied declaration names others (the route tables name the bodies and answers): follow them.
for (const name of needed) {
  const symbol = contractType(name);
  if (isVerbatim(symbol)) for (const declaration of symbol.declarations) for (const other of namesIn(declaration)) needed.add(other);
}
for (const name of [...needed].sort()) {
  const symbol = contractType(name);
  if (isVerbatim(symbol)) {
    for (const declaration of symbol.declarations) lines.push(declaration.getText().replace(/^(export\s+)?/, 'export '));
  } else {
    lines.push(`export type ${name} = ${written(checker.getDeclaredTypeOfSymbol(symbol))};`);
  }
}
writeFileSync(join(dist, 'contract.d.ts'), `${lines.join('\n')}\n`);

for (const file of declarations) {
  const text = readFileSync(file, 'utf8');
  let target = relative(dirname(file), join(dist, 'contract.js'));
  if (!target.startsWith('.')) target = `./${target}`;
  const rewritten = text.replace(new RegExp(quoted, 'g'), `'${target}'`);
  if (rewritten !== text) writeFileSync(file, rewritten);
}
console.log(`inline-declarations: ${needed.size} contract types written to ${relative(process.cwd(), join(dist, 'contract.d.ts'))}`);
