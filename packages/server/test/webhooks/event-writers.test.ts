import { describe, expect, it } from 'vitest';
import { writesTo } from '../helpers/source-writes.js';

/**
 * Webhook receivers keep their copies of these tables in step through events, so every writer of
 * them must record its event (webhooks/events.ts recordEvent) in the transaction of its change. A
 * writer that forgets leaves receivers silently out of date, so every writer is checked here.
 */
const EVENT_TABLES = ['users', 'sessions', 'organizations', 'organization_members'];

/** Session writes that change neither its existence nor its revocation: no event is defined for them. */
const NO_EVENT = new Set([
  'rotateRefreshToken',
  'rotateCurrentRefreshToken',
  'setActiveOrganization',
  'clearActiveOrganization',
]);

/** Deleting a whole project removes its rows wholesale; there is no one left to tell. */
const PROJECT_DELETION = 'tenancy/queries.ts';

describe('writers of users, sessions, organizations and memberships', () => {
  const writes = writesTo(EVENT_TABLES, { skipFiles: [PROJECT_DELETION] });

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
