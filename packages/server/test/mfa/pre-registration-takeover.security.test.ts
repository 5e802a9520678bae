import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { json, signUp } from '../helpers/identity.js';
import { enableTotp, mfaCall } from '../helpers/mfa.js';

describe("a squatter's second factor on someone else's address", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('is removed when the owner first proves the address, so it cannot lock them out', async () => {
    // Someone signs up with another person's address (unverified) and adds TOTP of their own.
    const squatter = await signUp(t);
    await enableTotp(t, squatter.accessToken);
    // The owner signs in with a magic link: the address is proven for the first time.
    expect((await start(t, 'magic-link', { email: squatter.email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const [email] = await outbox(t, squatter.email);
    const owner = await start(t, 'magic-link/verify', { token: tokenFrom(email!) });
    expect(owner.statusCode).toBe(200);
    const session = json(owner).session;
    expect(json(await mfaCall(t, session.accessToken, 'GET', '/v1/me/mfa'))).toEqual({
      totp: { enabled: false },
      backupCodes: { remaining: 0 },
      passkeys: 0,
    });
    expect(json(await t.call({ method: 'GET', url: '/v1/me', credential: session.accessToken })).user.twoFactorEnabled).toBe(false);
  });
});
