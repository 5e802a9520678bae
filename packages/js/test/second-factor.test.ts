import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatehouse, GatehouseError, type Gatehouse } from '../src/index.js';
import { totpCode } from '../../server/test/helpers/mfa.js';
import {
  codeFrom,
  GOOD_PASSWORD,
  outbox,
  REDIRECT,
  startLiveGatehouse,
  tokenFrom,
  uniqueEmail,
  type LiveGatehouse,
} from './helpers/gatehouse.js';

/** The second factor through @gatehouse/js against a real Gatehouse over HTTP. */
let live: LiveGatehouse;
const clients: Gatehouse[] = [];
beforeAll(async () => {
  live = await startLiveGatehouse();
});
afterAll(async () => {
  for (const gh of clients) gh.destroy();
  await live.close();
});

async function client(): Promise<Gatehouse> {
  const gh = createGatehouse({ publishableKey: live.t.project.development.publishableKey, baseUrl: live.url });
  clients.push(gh);
  await gh.load();
  return gh;
}

const settings = (payload: Record<string, unknown>) =>
  live.t.call({
    method: 'PATCH',
    url: `/v1/platform/environments/${live.t.project.development.id}`,
    credential: live.t.platformKey,
    payload,
  });

/** A user with TOTP enabled through the SDK's own session; answers its secret and backup codes. */
async function userWithTotp() {
  const email = uniqueEmail('js-mfa');
  // A verified address: proving it later would remove the factors set before (the takeover defence).
  await live.t.call({
    method: 'POST',
    url: '/v1/users',
    credential: live.t.project.development.secretKey,
    payload: { email, password: GOOD_PASSWORD, emailVerified: true },
  });
  const owner = await client();
  await owner.signIn.password({ email, password: GOOD_PASSWORD });
  const setup = await owner.fetch(`${live.url}/v1/me/mfa/totp`, { method: 'POST' });
  const { secret } = (await setup.json()) as { secret: string };
  const verified = await owner.fetch(`${live.url}/v1/me/mfa/totp/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: totpCode(secret) }),
  });
  const { backupCodes } = (await verified.json()) as { backupCodes: string[] };
  // The verify spent the current step: the sign-ins below use the next one.
  return { email, secret, backupCodes };
}

describe('a second factor in @gatehouse/js', () => {
  it('signIn.password resolves needs_second_factor (signed out); secondFactor with a TOTP code signs in', async () => {
    const user = await userWithTotp();
    const gh = await client();
    const first = await gh.signIn.password({ email: user.email, password: GOOD_PASSWORD });
    expect(first).toMatchObject({ status: 'needs_second_factor', factors: ['totp', 'backup_code'], isSignedIn: false });
    expect(gh.state.isSignedIn).toBe(false);
    expect(gh.signIn.pendingSecondFactor()).toMatchObject({ status: 'needs_second_factor', attemptId: expect.stringMatching(/^sia_/) });
    const wrong = await gh.signIn.secondFactor({ factor: 'totp', code: '00000a' }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(GatehouseError);
    expect((wrong as GatehouseError).code).toBe('invalid_credentials');
    const done = await gh.signIn.secondFactor({ factor: 'totp', code: totpCode(user.secret, Date.now(), 1) });
    expect(done).toMatchObject({ status: 'complete', isSignedIn: true, user: { email: user.email }, backupCodes: null });
    expect(gh.signIn.pendingSecondFactor()).toBeNull();
  });

  it('a backup code completes a magic-link sign-in met at handleRedirect', async () => {
    const user = await userWithTotp();
    const prover = await client();
    await prover.signIn.emailCode.start({ email: user.email });
    const [codeMail] = await outbox(live.t, user.email);
    expect(await prover.signIn.emailCode.verify({ code: codeFrom(codeMail!) })).toMatchObject({ status: 'needs_second_factor' });

    const gh = await client();
    await gh.signIn.magicLink.start({ email: user.email, redirectUrl: REDIRECT });
    const link = (await outbox(live.t, user.email)).find((m) => m.kind === 'magic_link')!;
    const url = new URL(REDIRECT);
    url.searchParams.set('token', tokenFrom(link));
    expect(await gh.handleRedirect(url)).toMatchObject({ status: 'needs_second_factor', isSignedIn: false });
    expect(await gh.signIn.secondFactor({ factor: 'backup_code', code: user.backupCodes[0]! })).toMatchObject({ isSignedIn: true });
  });

  it('under mfa "required" a sign-up resolves needs_second_factor_setup; totpSetup and its first code sign in with backup codes', async () => {
    expect((await settings({ mfa: 'required' })).statusCode).toBe(200);
    try {
      const gh = await client();
      const email = uniqueEmail('js-required');
      const signedUp = await gh.signUp({ email, password: GOOD_PASSWORD });
      expect(signedUp).toMatchObject({ status: 'needs_second_factor_setup', factors: ['totp', 'passkey'], isSignedIn: false });
      const setup = await gh.signIn.totpSetup();
      expect(setup.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
      const done = await gh.signIn.secondFactor({ factor: 'totp', code: totpCode(setup.secret) });
      expect(done).toMatchObject({ status: 'complete', isSignedIn: true, user: { email } });
      expect(done.backupCodes).toHaveLength(10);
    } finally {
      await settings({ mfa: 'optional' });
    }
  });

  it('totpSetup asked twice at once for one attempt (a component mounted twice) answers one secret; asked later, the new one, which signs in', async () => {
    expect((await settings({ mfa: 'required' })).statusCode).toBe(200);
    try {
      const gh = await client();
      const signedUp = await gh.signUp({ email: uniqueEmail('js-setup-twice'), password: GOOD_PASSWORD });
      expect(signedUp).toMatchObject({ status: 'needs_second_factor_setup' });
      // Both in flight at once, as React's StrictMode runs an effect twice: each request would replace the pending secret.
      const [first, second] = await Promise.all([gh.signIn.totpSetup(), gh.signIn.totpSetup()]);
      expect(second.secret).toBe(first.secret);
      // Asked again once answered: a new secret, which the server now keeps.
      const again = await gh.signIn.totpSetup();
      expect(again.secret).not.toBe(first.secret);
      const done = await gh.signIn.secondFactor({ factor: 'totp', code: totpCode(again.secret) });
      expect(done).toMatchObject({ status: 'complete', isSignedIn: true });
    } finally {
      await settings({ mfa: 'optional' });
    }
  });

  it('secondFactor without a pending sign-in says to sign in first', async () => {
    const gh = await client();
    await expect(gh.signIn.secondFactor({ factor: 'totp', code: '123456' })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
