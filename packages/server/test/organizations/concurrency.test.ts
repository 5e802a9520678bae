import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, rolesOf, type Person } from '../helpers/organizations.js';
import { testDb } from '../helpers/store.js';

/**
 * The invariants hold when changes race: two requests are in flight at once (Promise.all through the
 * HTTP layer). On PostgreSQL each runs on its own pooled connection and the organization row lock
 * orders them; on SQLite the single connection runs one transaction at a time.
 *
 * So only the PostgreSQL run can catch a missing row lock: on SQLite two transactions cannot
 * interleave at all (its writes, and here its whole transactions, are serialized), and the lock
 * is not even sent there. test/unit/organization-lock.test.ts catches it in every run, PostgreSQL
 * or not, by reading the statements each change path would send to PostgreSQL.
 */
describe(`organization invariants under concurrency (${testDb()})`, () => {
  let t: TestApp;
  let a: Person;
  let b: Person;
  beforeAll(async () => {
    t = await startTestApp();
    a = await person(t, undefined, 'owner-a');
    b = await person(t, undefined, 'owner-b');
  }, 60_000); // signing people up hashes passwords: slow on a busy machine
  afterAll(() => t.close());

  const as = (who: Person, method: 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.call({ method, url, credential: who.accessToken, ...(payload === undefined ? {} : { payload }) });
  const sk = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload === undefined ? {} : { payload }) });

  /** Many rounds of HTTP calls: a generous bound for a busy machine, not a timing assertion. */
  const ROUNDS_TIMEOUT = 120_000;

  const owners = (roles: Record<string, string>) => Object.values(roles).filter((r) => r === 'owner').length;

  /** An organization whose only owners are a and b, both acting as it. */
  async function twoOwners(name: string) {
    const org = await createOrg(t, a.userId, { name });
    await addMember(t, org.id, b.userId, 'owner');
    await actAs(t, a, org.id);
    await actAs(t, b, org.id);
    return org;
  }

  it(
    'two owners removing each other at the same moment: exactly one succeeds, 50 times over',
    async () => {
      for (let round = 0; round < 50; round++) {
        const org = await twoOwners(`Race ${round}`);
        const [byA, byB] = await Promise.all([
          as(a, 'DELETE', `/v1/me/organization/members/${b.userId}`),
          as(b, 'DELETE', `/v1/me/organization/members/${a.userId}`),
        ]);
        const statuses = [byA.statusCode, byB.statusCode].sort();
        expect(statuses, `round ${round}: ${byA.body} ${byB.body}`).toEqual([200, 403]);
        const loser = byA.statusCode === 403 ? byA : byB;
        expect(json(loser).error.code).toBe('forbidden');
        const roles = await rolesOf(t, org.id);
        expect(Object.keys(roles), `round ${round}`).toHaveLength(1);
        expect(owners(roles), `round ${round}`).toBe(1);
      }
    },
    ROUNDS_TIMEOUT,
  );

  it(
    'two owners demoting each other at the same moment leave exactly one owner, 20 times over',
    async () => {
      for (let round = 0; round < 20; round++) {
        const org = await twoOwners(`Demote ${round}`);
        const [byA, byB] = await Promise.all([
          as(a, 'PATCH', `/v1/me/organization/members/${b.userId}`, { role: 'admin' }),
          as(b, 'PATCH', `/v1/me/organization/members/${a.userId}`, { role: 'admin' }),
        ]);
        expect([byA.statusCode, byB.statusCode].sort(), `round ${round}: ${byA.body} ${byB.body}`).toEqual([200, 403]);
        expect(owners(await rolesOf(t, org.id)), `round ${round}`).toBe(1);
      }
    },
    ROUNDS_TIMEOUT,
  );

  it(
    'two administrators demoting the last two owners at the same moment leave at least one owner',
    async () => {
      // Through the secret key, which may change owners: exactly one demotion wins.
      for (let round = 0; round < 20; round++) {
        const org = await twoOwners(`Backend ${round}`);
        const [first, second] = await Promise.all([
          sk('PATCH', `/v1/organizations/${org.id}/members/${a.userId}`, { role: 'admin' }),
          sk('PATCH', `/v1/organizations/${org.id}/members/${b.userId}`, { role: 'admin' }),
        ]);
        expect([first.statusCode, second.statusCode].sort(), `round ${round}: ${first.body} ${second.body}`).toEqual([200, 403]);
        const refused = first.statusCode === 403 ? first : second;
        expect(json(refused).error.message).toMatch(/last owner[\s\S]*transfer ownership first/);
        expect(owners(await rolesOf(t, org.id)), `round ${round}`).toBe(1);
      }

      // Through sessions, admins may not change an owner's role at all, however they race.
      const org = await twoOwners('Admins');
      const admin1 = await person(t, undefined, 'admin-1');
      const admin2 = await person(t, undefined, 'admin-2');
      await addMember(t, org.id, admin1.userId, 'admin');
      await addMember(t, org.id, admin2.userId, 'admin');
      await actAs(t, admin1, org.id);
      await actAs(t, admin2, org.id);
      for (let round = 0; round < 10; round++) {
        const [first, second] = await Promise.all([
          as(admin1, 'PATCH', `/v1/me/organization/members/${a.userId}`, { role: 'member' }),
          as(admin2, 'PATCH', `/v1/me/organization/members/${b.userId}`, { role: 'member' }),
        ]);
        expect([first.statusCode, second.statusCode]).toEqual([403, 403]);
      }
      expect(owners(await rolesOf(t, org.id))).toBe(2);
    },
    ROUNDS_TIMEOUT,
  );

  it(
    'an owner leaving while the other is demoted at the same moment leaves at least one owner, 20 times over',
    async () => {
      for (let round = 0; round < 20; round++) {
        const org = await twoOwners(`Leave ${round}`);
        const [leave, demote] = await Promise.all([
          as(a, 'DELETE', `/v1/me/organization/members/${a.userId}`),
          sk('PATCH', `/v1/organizations/${org.id}/members/${b.userId}`, { role: 'member' }),
        ]);
        expect(
          [leave.statusCode, demote.statusCode].filter((s) => s === 200),
          `round ${round}`,
        ).toHaveLength(1);
        expect(owners(await rolesOf(t, org.id)), `round ${round}`).toBe(1);
      }
    },
    ROUNDS_TIMEOUT,
  );

  it(
    'adding the same user twice at the same moment: one 201, one 409',
    async () => {
      const org = await createOrg(t, a.userId, { name: 'Double add' });
      for (let round = 0; round < 10; round++) {
        const user = await plainUser(t);
        const results = await Promise.all([
          sk('POST', `/v1/organizations/${org.id}/members`, { userId: user.id }),
          sk('POST', `/v1/organizations/${org.id}/members`, { email: user.email }),
        ]);
        expect(results.map((r) => r.statusCode).sort(), results.map((r) => r.body).join(' ')).toEqual([201, 409]);
      }
    },
    ROUNDS_TIMEOUT,
  );
});
