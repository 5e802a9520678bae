import { describe, expect, it } from 'vitest';
import { writesTo } from '../helpers/source-writes.js';

/**
 * Webhook receivers keep their copies of these tables in step through events, so every writer of
 * them must record its event (webhooks/events.ts recordEvent) in the transaction of its change. A
 * writer that forgets leaves receivers silently out of date, so every writer is checked here.
 */
const EVENT_TABLES = ['users', 'sessions', 'organizations', 'organization_members', 'organization_invitations'];

/** Writes for which no event is defined: a session's rotation or organization switch, an invitation's renewal, a rehash. */
const NO_EVENT = new Set([
  'rotateRefreshToken',
  'rotateCurrentRefreshToken',
  'setActiveOrganization',
  'clearActiveOrganization',
  // A session's verified factors (amr, reverification): no event is defined for that; the next token shows them.
  'recordSessionFactor',
  // Inviting a pending address again renews its invitation (token, role, expiry): no event is defined for that.
  'refreshInvitation',
  // An imported digest rehashed to argon2id at the first sign-in: the same password, nothing the user object shows changes.
  'replacePasswordHash',
  // A password sign-in's proof: the hash written back as it is, nothing changes.
  'passwordUnchanged',
]);

/**
 * Writers that insert their event row in the statement of their change (PostgreSQL CTEs) or in one
 * synchronous SQLite transaction, without recordEvent; test/auth/session-start.test.ts checks each
 * writes its event, and writes nothing when it refuses.
 */
const EVENT_IN_THE_SAME_STATEMENT = new Set(['startSession']);

/** Deleting a whole project removes its rows wholesale; there is no one left to tell. */
const PROJECT_DELETION = 'tenancy/queries.ts';

describe('writers of users, sessions, organizations and memberships', () => {
  const writes = writesTo(EVENT_TABLES, { skipFiles: [PROJECT_DELETION] });

  it('are found (the scan works)', () => {
    expect(writes.length).toBeGreaterThanOrEqual(14);
    expect(writes.map((w) => w.functionName)).toEqual(
      expect.arrayContaining([
        'insertUser',
        'deleteUser',
        'startSession',
        'revokeUserSessions',
        'insertOrganization',
        'deleteMembership',
        'insertInvitation',
        'settleInvitation',
      ]),
    );
  });

  it('record a webhook event in the transaction of their change', () => {
    const records = (body: string) =>
      (/atomically\(\s*db,/.test(body) && /recordEvent\(\s*db,\s*environmentId,/.test(body)) ||
      /insertWithEvent\(\s*db,\s*environmentId,/.test(body);
    const silent = writes.filter(
      (w) => !NO_EVENT.has(w.functionName ?? '') && !EVENT_IN_THE_SAME_STATEMENT.has(w.functionName ?? '') && !records(w.body),
    );
    expect(silent.map((w) => `${w.file}: ${w.functionName} (${w.table})`)).toEqual([]);
  });
});
