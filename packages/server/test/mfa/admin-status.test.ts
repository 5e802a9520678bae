import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { enableTotp } from '../helpers/mfa.js';
import { person } from '../helpers/organizations.js';
import { testDb } from '../helpers/store.js';

/** GET /v1/users/{userId}/mfa (secret key, and the console's platform copy): what support sees before a reset. */
describe(`a user's second factors with the secret key (${testDb()})`, () => {
  let t: TestApp;
  const clock = testClock();
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  it('shows TOTP and the backup codes left, and nothing once reset; 404 for a user of another environment', async () => {
    const ada = await person(t, undefined, 'ada');
    const sk = t.project.development.secretKey;
    const read = async () => json(await t.call({ method: 'GET', url: `/v1/users/${ada.userId}/mfa`, credential: sk }));
    expect(await read()).toEqual({ totp: { enabled: false }, backupCodes: { remaining: 0 }, passkeys: 0 });
    await enableTotp(t, ada.accessToken, clock.now);
    expect(await read()).toMatchObject({ totp: { enabled: true }, backupCodes: { remaining: 10 } });
    expect((await t.call({ method: 'DELETE', url: `/v1/users/${ada.userId}/mfa`, credential: sk })).statusCode).toBe(200);
    expect(await read()).toEqual({ totp: { enabled: false }, backupCodes: { remaining: 0 }, passkeys: 0 });
    const elsewhere = await t.call({ method: 'GET', url: `/v1/users/${ada.userId}/mfa`, credential: t.project.production.secretKey });
    expect(elsewhere.statusCode).toBe(404);
  });
});
