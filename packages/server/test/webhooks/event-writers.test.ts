import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Webhook receivers keep their copies of these tables in step through events, so every writer of
 * them must record its event (webhooks/events.ts recordEvent) in the transaction of its change. A
 * writer that forgets leaves receivers silently out of date, so every writer is checked here.
 */
const EVENT_TABLES = ['users', 'sessions', 'organizations', 'organization_members'];

/** Session writes that change neither its existence nor its revocation: no event is defined for them. */
const NO_EVENT = new Set([
  'rotationWrite',
  'rotateRefreshToken',
  'rotateCurrentRefreshToken',
  'setActiveOrganization',
  'clearActiveOrganization',
]);

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function writers() {
  const found: { file: string; table: string; functionName: string | undefined; body: string }[] = [];
  const pattern = new RegExp(`\\.(?:updateTable|deleteFrom|insertInto)\\('(${EVENT_TABLES.join('|')})'\\)`, 'g');
  for (const file of sourceFiles(SRC)) {
    const relative = path.relative(SRC, file);
    // Deleting a whole project removes its rows wholesale; there is no one left to tell.
    if (relative === path.join('tenancy', 'queries.ts')) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(pattern)) {
      // The enclosing top-level function, exported or not.
      const start = Math.max(...[...text.slice(0, match.index).matchAll(/\n(?:export )?(?:async )?function /g)].map((m) => m.index), -1);
      const end = text.indexOf('\n}\n', match.index);
      const body = start === -1 || end === -1 ? '' : text.slice(start, end);
      found.push({ file: relative, table: match[1]!, functionName: /function (\w+)/.exec(body)?.[1], body });
    }
  }
  return found;
}

describe('writers of users, sessions, organizations and memberships', () => {
  const writes = writers();

  it('are found (the scan works)', () => {
    expect(writes.length).toBeGreaterThanOrEqual(14);
    expect(writes.map((w) => w.functionName)).toEqual(
      expect.arrayContaining(['insertUser', 'deleteUser', 'insertSession', 'revokeUserSessions', 'insertOrganization', 'deleteMembership']),
    );
  });

  it('record a webhook event in the transaction of their change', () => {
    const records = (body: string) =>
      (/atomically\(\s*db,/.test(body) && /recordEvent\(\s*db,\s*environmentId,/.test(body)) ||
      /insertWithEvent\(\s*db,\s*environmentId,/.test(body);
    const silent = writes.filter((w) => !NO_EVENT.has(w.functionName ?? '') && !records(w.body));
    expect(silent.map((w) => `${w.file}: ${w.functionName} (${w.table})`)).toEqual([]);
  });
});
