import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { decodeJwt, json } from '../helpers/identity.js';
import { FIXTURE_SIZE, makePng, sha256 } from '../helpers/images.js';
import { actAs, addMember, createOrg, person, type Person } from '../helpers/organizations.js';
import { describeImage, requestTicket, uploadThroughApi } from '../helpers/uploads.js';

/**
 * Who may upload an organization image: org:manage on the live membership of the session's
 * current organization. Token claims are a snapshot and authorize nothing. The instance serves
 * its assets over https here, so every own URL is saved under the environment and verification
 * rules, not the loopback exception.
 */
const ASSETS = 'https://assets.gatehouse.test';

let t: TestApp;
let dev: TestEnvironment;
let owner: Person;
let admin: Person;
let member: Person;
let seed = 12000;
const png = () => makePng(5, 3, { seed: seed++ });

beforeAll(async () => {
  t = await startTestApp({ assetBaseUrl: ASSETS });
  dev = t.project.development;
  [owner, admin, member] = [await person(t, undefined, 'owner'), await person(t, undefined, 'admin'), await person(t, undefined, 'member')];
}, 60_000);
afterAll(() => t.close());

/** A fresh organization with owner, admin and member, each acting as it. */
async function team(name = 'Team') {
  const org = await createOrg(t, owner.userId, { name });
  await addMember(t, org.id, admin.userId, 'admin');
  await addMember(t, org.id, member.userId, 'member');
  for (const who of [owner, admin, member]) await actAs(t, who, org.id);
  return org;
}

const orgImageTicket = (who: Person, bytes = png()) =>
  requestTicket(t, who.accessToken, describeImage(bytes, 'image/png', FIXTURE_SIZE, { purpose: 'organization_image' }));

function expectForbidden(response: { statusCode: number; body: string; json(): any }, message: RegExp) {
  expect(response.statusCode, response.body).toBe(403);
  expect(response.json().error.code).toBe('forbidden');
  expect(response.json().error.message).toMatch(message);
}

const setRole = (organizationId: string, userId: string, role: string) =>
  t.call({ method: 'PATCH', url: `/v1/organizations/${organizationId}/members/${userId}`, credential: dev.secretKey, payload: { role } });

describe('organization_image tickets need org:manage on the live membership', () => {
  it('a member without org:manage is refused, and may still upload a profile picture', async () => {
    await team();
    expectForbidden(await orgImageTicket(member), /org:manage.*role "member"/);
    const avatar = await requestTicket(t, member.accessToken, describeImage(png(), 'image/png', FIXTURE_SIZE));
    expect(avatar.statusCode, avatar.body).toBe(200);
    expect((await orgImageTicket(admin)).statusCode).toBe(200);
  });

  it('the refusal comes before the existence check: a member learns nothing about what is stored', async () => {
    await team();
    const bytes = png();
    await uploadThroughApi(t, owner.accessToken, bytes, 'image/png', FIXTURE_SIZE, 'organization_image');
    expectForbidden(await orgImageTicket(member, bytes), /org:manage/);
    expect(json(await orgImageTicket(owner, bytes)).alreadyExists).toBe(true);
  });

  it('a demoted admin whose token still claims org:manage is refused with that same token', async () => {
    const org = await team();
    const claims = decodeJwt(admin.accessToken).payload;
    expect(claims).toMatchObject({ org_id: org.id, org_role: 'admin' });
    expect(claims.org_permissions).toContain('org:manage');
    expect((await orgImageTicket(admin)).statusCode).toBe(200);

    expect((await setRole(org.id, admin.userId, 'member')).statusCode).toBe(200);
    // The token is unchanged and still verifies; only the membership changed.
    expect(decodeJwt(admin.accessToken).payload.org_permissions).toContain('org:manage');
    expectForbidden(await orgImageTicket(admin), /org:manage.*not your token/);
    // And promoting them again works at once, with the same token.
    expect((await setRole(org.id, admin.userId, 'admin')).statusCode).toBe(200);
    expect((await orgImageTicket(admin)).statusCode).toBe(200);
  });

  it('a removed admin with a live token is refused', async () => {
    const org = await team();
    const removed = await t.call({
      method: 'DELETE',
      url: `/v1/organizations/${org.id}/members/${admin.userId}`,
      credential: dev.secretKey,
    });
    expect(removed.statusCode).toBe(200);
    expectForbidden(await orgImageTicket(admin), /no longer a member/);
  });

  it('a custom role grants it while its permissions include org:manage, read live', async () => {
    const org = await team();
    const roles = `/v1/platform/environments/${dev.id}/roles`;
    const created = await t.call({
      method: 'POST',
      url: roles,
      credential: t.platformKey,
      payload: { key: `brand_${seed}`, name: 'Brand', permissions: ['org:manage'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const key = json(created).key;
    expect((await setRole(org.id, member.userId, key)).statusCode).toBe(200);
    expect((await orgImageTicket(member)).statusCode).toBe(200);

    const changed = await t.call({ method: 'PATCH', url: `${roles}/${key}`, credential: t.platformKey, payload: { permissions: [] } });
    expect(changed.statusCode, changed.body).toBe(200);
    expectForbidden(await orgImageTicket(member), /org:manage/);
    expect((await setRole(org.id, member.userId, 'member')).statusCode).toBe(200);
  });

  it('without a current organization, the answer says to switch to one', async () => {
    const loner = await person(t, undefined, 'loner');
    const response = await orgImageTicket(loner);
    expect(response.statusCode).toBe(404);
    expect(json(response).error.code).toBe('not_found');
    expect(json(response).error.message).toMatch(/no current organization.*switch-organization/);
  });

  it('when the current organization was deleted, the answer says so', async () => {
    const org = await team();
    const deleted = await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}`, credential: dev.secretKey });
    expect(deleted.statusCode).toBe(200);
    const response = await orgImageTicket(owner);
    expect(response.statusCode).toBe(404);
    expect(json(response).error.message).toMatch(/no longer exists/);
  });
});

describe('saving an organization image', () => {
  it('a member without org:manage is refused with 403 before the URL is looked at', async () => {
    await team();
    const { publicUrl } = await uploadThroughApi(t, owner.accessToken, png(), 'image/png', FIXTURE_SIZE, 'organization_image');
    for (const imageUrl of [publicUrl, 'http://not-https.example.test/a.png', `${ASSETS}/v1/assets/${dev.id}/${'f'.repeat(64)}`]) {
      const response = await t.call({ method: 'PATCH', url: '/v1/me/organization', credential: member.accessToken, payload: { imageUrl } });
      expectForbidden(response, /org:manage/);
    }
    const saved = await t.call({
      method: 'PATCH',
      url: '/v1/me/organization',
      credential: owner.accessToken,
      payload: { imageUrl: publicUrl },
    });
    expect(json(saved).imageUrl).toBe(publicUrl);
  });

  it('an own https URL is still held to the environment and verification rules', async () => {
    await team();
    const prod = await person(t, t.project.production, 'prod');
    const theirs = await uploadThroughApi(t, prod.accessToken, png(), 'image/png', FIXTURE_SIZE);
    expect(theirs.publicUrl.startsWith(`${ASSETS}/`)).toBe(true);
    const never = `${ASSETS}/v1/assets/${dev.id}/${sha256(png())}`;
    for (const [imageUrl, message] of [
      [theirs.publicUrl, /not an upload of this environment/],
      [never, /No image was uploaded/],
      [`${ASSETS}/v1/assets/${dev.id}/not-a-key`, /not an upload of this environment/],
    ] as const) {
      const response = await t.call({ method: 'PATCH', url: '/v1/me/organization', credential: owner.accessToken, payload: { imageUrl } });
      expect(response.statusCode, response.body).toBe(400);
      expect(json(response).error).toMatchObject({ code: 'invalid_request', details: { fields: ['imageUrl'] } });
      expect(json(response).error.message).toMatch(message);
    }
  });
});
