import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { enableTotp, reverify, totpCode } from '../helpers/mfa.js';
import { actAs, addMember, createOrg, person, switchTo } from '../helpers/organizations.js';

const clock = testClock(1_830_000_000_000);

describe('organizations that require MFA', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;
  const patchOrg = (id: string, payload: Record<string, unknown>) =>
    t.call({ method: 'PATCH', url: `/v1/organizations/${id}`, credential: sk(), payload });

  it("PATCH /v1/organizations/{id} sets mfaRequired, shown on the organization and in the member's list", async () => {
    const owner = await person(t);
    const org = await createOrg(t, owner.userId);
    expect((org as Record<string, unknown>).mfaRequired).toBe(false);
    const patched = await patchOrg(org.id, { mfaRequired: true });
    expect(patched.statusCode).toBe(200);
    expect(json(patched).mfaRequired).toBe(true);
    const listed = json(await t.call({ method: 'GET', url: '/v1/me/organizations', credential: owner.accessToken }));
    expect(listed.data.find((o: { id: string }) => o.id === org.id)).toMatchObject({ mfaRequired: true });
    const me = json(await t.call({ method: 'GET', url: '/v1/me', credential: owner.accessToken }));
    expect(me.organizations.find((o: { id: string }) => o.id === org.id)).toMatchObject({ mfaRequired: true });
  });

  it('refuses mfaRequired: true with 400 while the environment\'s mfa is "off"', async () => {
    const project = await t.createProject('Mfa off orgs');
    await t.setSettings(project.development.id, { mfa: 'off' });
    const owner = await person(t, project.development);
    const org = await createOrg(t, owner.userId, { environment: project.development });
    const refused = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}`,
      credential: project.development.secretKey,
      payload: { mfaRequired: true },
    });
    expect(refused.statusCode).toBe(400);
    expect(json(refused).error.code).toBe('invalid_request');
  });

  it('a member without a verified second factor cannot switch into it or act as it; with one they can', async () => {
    const owner = await person(t);
    const org = await createOrg(t, owner.userId);
    await actAs(t, owner, org.id);
    await patchOrg(org.id, { mfaRequired: true });

    // Already acting as it: every /v1/me/organization path is refused.
    for (const url of ['/v1/me/organization', '/v1/me/organization/members']) {
      const refused = await t.call({ method: 'GET', url, credential: owner.accessToken });
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('second_factor_required');
    }
    const member = await person(t);
    await addMember(t, org.id, member.userId);
    const switched = await switchTo(t, member, org.id);
    expect(switched.statusCode).toBe(403);
    expect(json(switched).error.code).toBe('second_factor_required');

    // Enrolling TOTP verifies it in this session; a new sign-in would need the second step (the door).
    await enableTotp(t, member.accessToken, clock.now);
    await actAs(t, member, org.id);
    expect((await t.call({ method: 'GET', url: '/v1/me/organization', credential: member.accessToken })).statusCode).toBe(200);

    // The owner reverifies with a second factor in the session they already have.
    const { secret } = await enableTotp(t, owner.accessToken, clock.now);
    expect((await t.call({ method: 'GET', url: '/v1/me/organization', credential: owner.accessToken })).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await reverify(t, owner.accessToken, { code: totpCode(secret, clock.now()) })).statusCode).toBe(200);
  });

  it('PATCH /v1/me/organization {mfaRequired} needs org:manage and, to turn it on, a second factor in the session', async () => {
    const owner = await person(t);
    const org = await createOrg(t, owner.userId);
    await actAs(t, owner, org.id);
    const patchMine = (who: { accessToken: string }, mfaRequired: boolean) =>
      t.call({ method: 'PATCH', url: '/v1/me/organization', credential: who.accessToken, payload: { mfaRequired } });

    const without = await patchMine(owner, true);
    expect(without.statusCode).toBe(403);
    expect(json(without).error.code).toBe('second_factor_required');

    await enableTotp(t, owner.accessToken, clock.now);
    const on = await patchMine(owner, true);
    expect(on.statusCode).toBe(200);
    expect(json(on)).toMatchObject({ mfaRequired: true, role: 'owner' });

    const member = await person(t);
    await addMember(t, org.id, member.userId);
    await enableTotp(t, member.accessToken, clock.now);
    await actAs(t, member, org.id);
    const forbidden = await patchMine(member, false);
    expect(forbidden.statusCode).toBe(403);
    expect(json(forbidden).error.code).toBe('forbidden');

    const off = await patchMine(owner, false);
    expect(off.statusCode).toBe(200);
    expect(json(off).mfaRequired).toBe(false);
  });
});
