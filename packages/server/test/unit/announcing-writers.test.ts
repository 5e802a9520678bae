import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sourceFiles, writesTo } from '../helpers/source-writes.js';

/**
 * Nodes cache rows of these tables (db/row-cache.ts) and drop them when a writer announces its
 * change (db/changes.ts). A writer that forgets to announce leaves other requests a stale row, and
 * no request-level test notices unless it happens to read that row from a warm cache, so every
 * writer is checked here, in the source.
 */
const CACHED_TABLES = ['sessions', 'users', 'organization_members', 'organizations', 'organization_roles'];

/** Inserts of rows no cache can hold yet: a new session, user or organization has never been read. */
const NEW_ROWS_ONLY = new Set(['insertUser', 'insertOrganization']);

/**
 * A plain refresh rotation changes only the refresh hashes (never cached) and the last activity,
 * which only grows: a stale cached copy can only look inactive too soon, and such a refusal is
 * checked against the row (test/sessions/refresh-cache.test.ts).
 */
const UNANNOUNCED_ROTATION = new Set(['rotateCurrentRefreshToken']);

/**
 * A password sign-in's proof (identity/queries.ts): it writes the hash back as it is, only to find
 * the row still holding it where the session starts. Nothing changes, so there is nothing to announce.
 */
const UNCHANGED_ROWS = new Set(['passwordUnchanged']);

describe('writers of cached rows', () => {
  const writes = writesTo(CACHED_TABLES);

  it('are found (the scan works)', () => {
    expect(writes.length).toBeGreaterThanOrEqual(15);
    expect(writes.map((w) => w.functionName)).toEqual(expect.arrayContaining(['revokeSession', 'updateUser', 'insertMembership']));
    // A write in a file-private helper is charged to each exported caller.
    expect(
      writes
        .filter((w) => w.via === 'rotationWrite')
        .map((w) => w.functionName)
        .sort(),
    ).toEqual(['rotateCurrentRefreshToken', 'rotateRefreshToken']);
  });

  it('live in the query modules, reached through exported functions', () => {
    for (const write of writes) {
      expect(write.file, `${write.file} writes ${write.table}`).toMatch(/(^|\/)([a-z]+-)?queries\.ts$/);
      expect(write.functionName, `${write.file}: a write to ${write.table} outside an exported query function`).toBeDefined();
    }
  });

  it('announce what they changed', () => {
    const silent = writes.filter(
      (w) =>
        !NEW_ROWS_ONLY.has(w.functionName!) &&
        !UNANNOUNCED_ROTATION.has(w.functionName!) &&
        !UNCHANGED_ROWS.has(w.functionName!) &&
        !w.body.includes('announce(db, {'),
    );
    expect(silent.map((w) => `${w.file}: ${w.functionName} (${w.table})`)).toEqual([]);
  });

  it('never write them with raw SQL', () => {
    const raw = new RegExp(`sql\`\\s*(update|delete from|insert into)\\s+"?(${CACHED_TABLES.join('|')})\\b`, 'i');
    for (const file of sourceFiles()) expect(raw.test(readFileSync(file, 'utf8')), file).toBe(false);
  });
});
