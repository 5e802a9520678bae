import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, rolesOf, type Person } from '../helpers/organizations.js';
import { testDb } from '../helpers/store.js';

/**
 * Deleting a user races the membership changes of the same organizations: the deletion guard runs
 * inside the delete transaction under the organization row locks, so an organization never ends
 * up without an owner. Two requests at once through the HTTP layer, as in concurrency.test.ts.
 */
describe(`user deletion racing membership changes (${testDb()})`, () => {
  let t: TestApp;
  let b: Person;
  beforeAll(async () => {
    t = await startTestApp();
    b = await person(t, undefined, 'co-owner');
  }, 60_000);
  afterAll(() => t.close());

  const sk = (method: 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload === undefined ? {} : { payload }) });
  const owners = (roles: Record<string, string>) => Object.values(roles).filter((r) => r === 'owner').length;
  const ROUNDS_TIMEOUT = 120_000;

  it(
    'deleting one co-owner while the other leaves, is removed or is demoted: exactly one wins and an owner remains, 45 times over',
    async () => {
      const ways = {
        leaves: () => t.call({ method: 'DELETE', url: `/v1/me/organization/members/${b.userId}`, credential: b.accessToken }),
        removed: (orgId: string) => sk('DELETE', `/v1/organizations/${orgId}/members/${b.userId}`),
        demoted: (orgId: string) => sk('PATCH', `/v1/organizations/${orgId}/members/${b.userId}`, { role: 'admin' }),
      };
      for (let round = 0; round < 45; round++) {
        const [way, change] = Object.entries(ways)[round % 3]!;
        // A backend-made user (no password to hash), so every round has a fresh one to delete.
        const a = await plainUser(t, undefined, 'doomed-owner');
        const org = await createOrg(t, a.id, { name: `Delete ${round}` });
        await addMember(t, org.id, b.userId, 'owner');
        if (way === 'leaves') await actAs(t, b, org.id);

        const [deletion, other] = await Promise.all([sk('DELETE', `/v1/users/${a.id}`), change(org.id)]);
        const label = `round ${round} (${way}): ${deletion.statusCode} ${deletion.body} / ${other.statusCode} ${other.body}`;
        expect([deletion.statusCode, other.statusCode].sort(), label).toEqual([200, 403]);
        const refused = deletion.statusCode === 403 ? deletion : other;
        expect(json(refused).error.code, label).toBe('forbidden');
        expect(json(refused).error.message, label).toMatch(/last owner[\s\S]*transfer ownership first/);
        const roles = await rolesOf(t, org.id);
        expect(owners(roles), label).toBe(1);
        // The refused deletion left the user in place; the accepted one removed them from the organization.
        expect(Object.keys(roles).includes(a.id), label).toBe(deletion.statusCode === 403);
      }
    },
    ROUNDS_TIMEOUT,
  );

  it(
    'deleting the two co-owners of two organizations at the same moment: exactly one deletion succeeds, 15 times over',
    async () => {
      for (let round = 0; round < 15; round++) {
        const [x, y] = [await plainUser(t, undefined, 'owner-x'), await plainUser(t, undefined, 'owner-y')];
        // Both own both organizations, so each deletion locks both of them (in the same order).
        const orgs = [await createOrg(t, x.id, { name: `Pair ${round} one` }), await createOrg(t, y.id, { name: `Pair ${round} two` })];
        await addMember(t, orgs[0]!.id, y.id, 'owner');
        await addMember(t, orgs[1]!.id, x.id, 'owner');

        const results = await Promise.all([sk('DELETE', `/v1/users/${x.id}`), sk('DELETE', `/v1/users/${y.id}`)]);
        const label = `round ${round}: ${results.map((r) => `${r.statusCode} ${r.body}`).join(' / ')}`;
        expect(results.map((r) => r.statusCode).sort(), label).toEqual([200, 403]);
        expect(json(results.find((r) => r.statusCode === 403)!).error.details.organizations, label).toHaveLength(2);
        for (const org of orgs) expect(owners(await rolesOf(t, org.id)), label).toBe(1);
      }
    },
    ROUNDS_TIMEOUT,
  );

  it(
    'adding a user while they are being deleted: the deletion succeeds and the add is 201 or 422, never a 500, 20 times over',
    async () => {
      const org = await createOrg(t, b.userId, { name: 'Add while deleting' });
      for (let round = 0; round < 20; round++) {
        const user = await plainUser(t, undefined, 'vanishing');
        const [deletion, add] = await Promise.all([
          sk('DELETE', `/v1/users/${user.id}`),
          t.call({
            method: 'POST',
            url: `/v1/organizations/${org.id}/members`,
            credential: t.project.development.secretKey,
            payload: { userId: user.id },
          }),
        ]);
        const label = `round ${round}: ${deletion.statusCode} ${deletion.body} / ${add.statusCode} ${add.body}`;
        expect(deletion.statusCode, label).toBe(200);
        expect([201, 422], label).toContain(add.statusCode);
        if (add.statusCode === 422) expect(json(add).error.code, label).toBe('user_not_found');
        // Either way the deleted user is no member.
        expect(Object.keys(await rolesOf(t, org.id)), label).not.toContain(user.id);
      }
    },
    ROUNDS_TIMEOUT,
  );
});
