import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Nodes cache rows of these tables (db/row-cache.ts) and drop them when a writer announces its
 * change (db/changes.ts). A writer that forgets to announce leaves other requests a stale row, and
 * no request-level test notices unless it happens to read that row from a warm cache, so every
 * writer is checked here, in the source.
 */
const CACHED_TABLES = ['sessions', 'users', 'organization_members', 'organizations', 'organization_roles'];

/** Inserts of rows no cache can hold yet: a new session, user or organization has never been read. */
const NEW_ROWS_ONLY = new Set(['insertSession', 'insertUser', 'insertOrganization']);

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

interface Write {
  file: string;
  table: string;
  functionName: string | undefined;
  body: string;
}

function writesToCachedTables(): Write[] {
  const writes: Write[] = [];
  const pattern = new RegExp(`\\.(?:updateTable|deleteFrom|insertInto)\\('(${CACHED_TABLES.join('|')})'\\)`, 'g');
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(pattern)) {
      const start = text.lastIndexOf('\nexport async function ', match.index);
      const end = text.indexOf('\n}\n', match.index);
      const body = start === -1 || end === -1 ? '' : text.slice(start, end);
      const functionName = /export async function (\w+)/.exec(body)?.[1];
      writes.push({ file: path.relative(SRC, file), table: match[1]!, functionName, body });
    }
  }
  return writes;
}

describe('writers of cached rows', () => {
  const writes = writesToCachedTables();

  it('are found (the scan works)', () => {
    expect(writes.length).toBeGreaterThanOrEqual(15);
    expect(writes.map((w) => w.functionName)).toEqual(expect.arrayContaining(['revokeSession', 'updateUser', 'insertMembership']));
  });

  it('live in the query modules, one exported function each', () => {
    for (const write of writes) {
      expect(write.file, `${write.file} writes ${write.table}`).toMatch(/(^|\/)queries\.ts$/);
      expect(write.functionName, `${write.file}: a write to ${write.table} outside an exported query function`).toBeDefined();
    }
  });

  it('announce what they changed', () => {
    const silent = writes.filter((w) => !NEW_ROWS_ONLY.has(w.functionName!) && !w.body.includes('announce(db, {'));
    expect(silent.map((w) => `${w.file}: ${w.functionName} (${w.table})`)).toEqual([]);
  });

  it('never write them with raw SQL', () => {
    const raw = new RegExp(`sql\`\\s*(update|delete from|insert into)\\s+"?(${CACHED_TABLES.join('|')})\\b`, 'i');
    for (const file of sourceFiles(SRC)) expect(raw.test(readFileSync(file, 'utf8')), file).toBe(false);
  });
});
