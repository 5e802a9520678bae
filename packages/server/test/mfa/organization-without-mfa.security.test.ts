import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, refresh, signIn } from '../helpers/identity.js';
import { enableTotp } from '../helpers/mfa.js';
import { actAs, addMember, createOrg, person, switchTo, type Person } from '../helpers/organizations.js';

const PATHS: [string, string][] = [
  ['GET', '/v1/me/organization'],
  ['PATCH', '/v1/me/organization'],
  ['DELETE', '/v1/me/organization'],
  ['GET', '/v1/me/organization/members'],
  ['POST', '/v1/me/organization/members'],
  ['GET', '/v1/me/organization/invitations'],
  ['GET', '/v1/me/organization/domains'],
  ['GET', '/v1/me/organization/membership-requests'],
];

describe('an organization requiring MFA reached without it', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function requiringOrg(owner: Person) {
    const org = await createOrg(t, owner.userId);
    await actAs(t, owner, org.id);
    const patched = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}`,
      credential: t.project.development.secretKey,
      payload: { mfaRequired: true },
    });
    expect(patched.statusCode).toBe(200);
    return org;
  }

  it('every path under /v1/me/organization is refused with 403 second_factor_required, before anything changes', async () => {
    const owner = await person(t);
    const org = await requiringOrg(owner);
    for (const [method, url] of PATHS) {
      const body = method === 'GET' || method === 'DELETE' ? {} : { payload: { name: 'Taken over' } };
      const refused = await t.call({ method: method as 'GET', url, credential: owner.accessToken, ...body });
      expect(refused.statusCode, `${method} ${url}`).toBe(403);
      expect(json(refused).error.code).toBe('second_factor_required');
    }
    const stillThere = await t.call({ method: 'GET', url: `/v1/organizations/${org.id}`, credential: t.project.development.secretKey });
    expect(json(stillThere)).toMatchObject({ name: org.name, mfaRequired: true });
  });

  it('a second factor enrolled in another session does not make this session verified', async () => {
    const owner = await person(t);
    const org = await requiringOrg(owner);
    // A password-only session from before TOTP: the user has TOTP now, this session never verified it.
    const signedIn = json(await signIn(t, owner.email, GOOD_PASSWORD)).session;
    await enableTotp(t, owner.accessToken);
    const second: Person = { ...owner, accessToken: signedIn.accessToken, refreshToken: signedIn.refreshToken };
    const switched = await switchTo(t, second, org.id);
    expect(switched.statusCode).toBe(403);
    expect(json(switched).error.code).toBe('second_factor_required');
    // The first session, which verified the code, may act as it.
    expect((await t.call({ method: 'GET', url: '/v1/me/organization', credential: owner.accessToken })).statusCode).toBe(200);
  });

  it("the organization still appears in the member's list, marked mfaRequired", async () => {
    const owner = await person(t);
    const org = await requiringOrg(owner);
    const list = json(await t.call({ method: 'GET', url: '/v1/me/organizations', credential: owner.accessToken }));
    expect(list.data.map((o: { id: string; mfaRequired: boolean }) => [o.id, o.mfaRequired])).toContainEqual([org.id, true]);
  });

  it('a session without a second factor gets no org_* claims from it: applications authorizing with them see no organization', async () => {
    const owner = await person(t);
    const org = await requiringOrg(owner);
    const refreshed = json(await refresh(t, owner.refreshToken)).session;
    expect(decodeJwt(refreshed.accessToken).payload).not.toHaveProperty('org_id');
    expect(decodeJwt(refreshed.accessToken).payload).not.toHaveProperty('org_permissions');
    // The session still acts as it: once it verifies a second factor, the claims come back.
    await enableTotp(t, refreshed.accessToken);
    const again = json(await refresh(t, refreshed.refreshToken)).session;
    expect(decodeJwt(again.accessToken).payload).toMatchObject({ org_id: org.id, org_role: 'owner' });
  });

  it('with the environment\'s mfa "off", an organization set to require it asks for nothing', async () => {
    const owner = await person(t);
    const org = await requiringOrg(owner);
    await t.setSettings(t.project.development.id, { mfa: 'off' });
    try {
      expect((await t.call({ method: 'GET', url: '/v1/me/organization', credential: owner.accessToken })).statusCode).toBe(200);
      const other = await person(t);
      await addMember(t, org.id, other.userId);
      expect((await switchTo(t, other, org.id)).statusCode).toBe(200);
      expect(decodeJwt(other.accessToken).payload.org_id).toBe(org.id);
    } finally {
      await t.setSettings(t.project.development.id, { mfa: 'optional' });
    }
  });
});
