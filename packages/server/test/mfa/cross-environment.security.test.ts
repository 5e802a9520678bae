import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { enableTotp, mfaCall, reverify } from '../helpers/mfa.js';
import { createOrg } from '../helpers/organizations.js';

describe("another environment's user", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("a secret key of another environment cannot reset a user's second factors", async () => {
    const user = await signUp(t);
    await enableTotp(t, user.accessToken);
    for (const credential of [t.project.production.secretKey, (await t.createProject('Other')).development.secretKey]) {
      const refused = await t.call({ method: 'DELETE', url: `/v1/users/${user.userId}/mfa`, credential });
      expect(refused.statusCode).toBe(404);
    }
    expect(json(await mfaCall(t, user.accessToken, 'GET', '/v1/me/mfa')).totp.enabled).toBe(true);
  });

  it("backup codes of the same address in another environment are not this user's", async () => {
    const email = uniqueEmail('twin');
    const here = await signUp(t, { email });
    const there = await signUp(t, { email, environment: t.project.production });
    const hereCodes = (await enableTotp(t, here.accessToken)).backupCodes;
    await enableTotp(t, there.accessToken);
    expect((await reverify(t, there.accessToken, { backupCode: hereCodes[0] })).statusCode).toBe(401);
    expect((await reverify(t, here.accessToken, { backupCode: hereCodes[0] })).statusCode).toBe(200);
  });

  it('an organization of another environment cannot be made to require MFA', async () => {
    const owner = await signUp(t);
    const org = await createOrg(t, owner.userId);
    const refused = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}`,
      credential: t.project.production.secretKey,
      payload: { mfaRequired: true },
    });
    expect(refused.statusCode).toBe(404);
  });
});
