import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Encode } from '../../src/mfa/totp.js';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { decodeJwt, GOOD_PASSWORD, json, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { enableTotp, secondFactor, totpCode } from '../helpers/mfa.js';
import { createOrg, plainUser } from '../helpers/organizations.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { createConnection, enableSso, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

const SECRET = base32Encode(Buffer.from('an imported secret..'));
const START_AGAIN = /start the sign-in again/i;

/**
 * The second factor at the one door (DESIGN "One door to a session"): each way in stops at a 202
 * with no session, refresh token or handoff for a user who has (or must have) a second factor,
 * and the second step holds under replays, races, other environments and guessing.
 */
describe(`the second factor skipped or forged at sign-in (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestOidcIdp;
  let connectionId: string;
  const dev = () => t.project.development;

  beforeAll(async () => {
    t = await startTestApp();
    idp = await startOidcIdp();
    await enableSso(t, dev());
    const created = await createConnection(t, dev(), {
      type: 'oidc',
      name: 'Corp',
      domains: ['corp.test'],
      issuer: idp.issuer,
      clientId: 'gatehouse',
      clientSecret: 'a-client-secret',
    });
    connectionId = json(created).id;
    idp.setClient({ clientId: 'gatehouse', clientSecret: 'a-client-secret', redirectUri: json(created).redirectUri });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  const settings = (payload: Record<string, unknown>, environment: TestEnvironment = dev()) =>
    t.call({ method: 'PATCH', url: `/v1/platform/environments/${environment.id}`, credential: t.platformKey, payload });

  async function withSettings<T>(payload: Record<string, unknown>, work: () => Promise<T>, reset: Record<string, unknown>): Promise<T> {
    expect((await settings(payload)).statusCode).toBe(200);
    try {
      return await work();
    } finally {
      await settings(reset);
    }
  }
  const required = <T>(work: () => Promise<T>) => withSettings({ mfa: 'required' }, work, { mfa: 'optional' });

  /** Live sessions and handoff tokens of the user: none may exist before the second factor. */
  async function issued(userId: string) {
    const sessions = await t.store.db
      .selectFrom('sessions')
      .select('id')
      .where('environment_id', '=', dev().id as never)
      .where('user_id', '=', userId)
      .execute();
    const handoffs = await t.store.db
      .selectFrom('handoff_tokens')
      .select('id')
      .where('environment_id', '=', dev().id as never)
      .where('user_id', '=', userId)
      .execute();
    return sessions.length + handoffs.length;
  }

  /** A 202 that carries nothing of a session. */
  function expectStopped(response: Awaited<ReturnType<typeof signIn>>, status: 'needs_second_factor' | 'needs_second_factor_setup') {
    expect(response.statusCode, response.body).toBe(202);
    const body = json(response);
    expect(body).toEqual({
      status,
      attemptId: expect.stringMatching(/^sia_[A-Za-z0-9_-]{30,}$/),
      factors: status === 'needs_second_factor_setup' ? ['totp', 'passkey'] : expect.any(Array),
    });
    expect(response.body).not.toMatch(/accessToken|refreshToken|session/);
    return body.attemptId as string;
  }

  /** A verified user with TOTP (an imported secret) and no backup codes. */
  async function verifiedWithTotp(tag = 'mfa') {
    const created = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: dev().secretKey,
      payload: { email: uniqueEmail(tag), password: GOOD_PASSWORD, emailVerified: true, totpSecret: SECRET },
    });
    expect(created.statusCode, created.body).toBe(201);
    return json(created) as { id: string; email: string };
  }

  /** A signed-up user with TOTP and backup codes; the sign-up's session is the only one. */
  async function withBackupCodes() {
    const user = await signUp(t);
    const { secret, backupCodes } = await enableTotp(t, user.accessToken);
    return { ...user, secret, backupCodes };
  }

  async function passwordAttempt(email: string) {
    const first = await signIn(t, email, GOOD_PASSWORD);
    expect(first.statusCode, first.body).toBe(202);
    return json(first).attemptId as string;
  }

  /** Completes a setup attempt: a secret inside the attempt, then its code. */
  async function setUp(attemptId: string) {
    const setup = await start(t, 'signin/second-factor/totp-setup', { attemptId });
    expect(setup.statusCode, setup.body).toBe(200);
    const done = await secondFactor(t, { attemptId, factor: 'totp', code: totpCode(json(setup).secret) });
    expect(done.statusCode, done.body).toBe(200);
    return json(done);
  }

  it('password sign-in: no session before the TOTP code; then amr ["pwd","totp"] and fva [0,0]', async () => {
    const user = await verifiedWithTotp();
    const attemptId = expectStopped(await signIn(t, user.email, GOOD_PASSWORD), 'needs_second_factor');
    expect(await issued(user.id)).toBe(0);
    const done = await secondFactor(t, { attemptId, factor: 'totp', code: totpCode(SECRET) });
    expect(done.statusCode, done.body).toBe(200);
    expect(json(done).user).toEqual({ id: user.id, email: user.email });
    expect(json(done).backupCodes).toBeUndefined();
    expect(decodeJwt(json(done).session.accessToken).payload).toMatchObject({ sub: user.id, amr: ['pwd', 'totp'], fva: [0, 0] });
    expect(await issued(user.id)).toBe(1);
  });

  it('factors lists totp, then backup_code while unused codes remain', async () => {
    const user = await withBackupCodes();
    expect(json(await signIn(t, user.email, GOOD_PASSWORD)).factors).toEqual(['totp', 'backup_code']);
  });

  it('magic link: the verify step stops at the second factor', async () => {
    const user = await verifiedWithTotp('link');
    expect((await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const [mail] = await outbox(t, user.email);
    const attemptId = expectStopped(await start(t, 'magic-link/verify', { token: tokenFrom(mail!) }), 'needs_second_factor');
    expect(await issued(user.id)).toBe(0);
    const done = await secondFactor(t, { attemptId, factor: 'totp', code: totpCode(SECRET) });
    expect(decodeJwt(json(done).session.accessToken).payload.amr).toEqual(['email', 'totp']);
  });

  it('email code: the verify step stops at the second factor', async () => {
    const user = await verifiedWithTotp('code');
    expect((await start(t, 'email-code', { email: user.email })).statusCode).toBe(202);
    const [mail] = await outbox(t, user.email);
    expectStopped(await start(t, 'email-code/verify', { email: user.email, code: codeFrom(mail!) }), 'needs_second_factor');
    expect(await issued(user.id)).toBe(0);
  });

  it('plain sign-up under mfa "required": set up a second factor first, then signed in with backup codes', async () => {
    await required(async () => {
      const email = uniqueEmail('plain');
      const attemptId = expectStopped(await start(t, 'signup', { email, password: GOOD_PASSWORD }), 'needs_second_factor_setup');
      const user = json(await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(email)}`, credential: dev().secretKey }))
        .data[0];
      expect(await issued(user.id)).toBe(0);
      const done = await setUp(attemptId);
      expect(done.backupCodes).toHaveLength(10);
      expect(decodeJwt(done.session.accessToken).payload).toMatchObject({ amr: ['pwd', 'totp'], fva: [0, 0] });
    });
  });

  it('sign-up verification under mfa "required": the verify step stops at the setup', async () => {
    await withSettings(
      { mfa: 'required', emailVerification: 'required' },
      async () => {
        const email = uniqueEmail('verified');
        const started = await start(t, 'signup', { email, password: GOOD_PASSWORD });
        expect(json(started).status).toBe('verification_required');
        const [mail] = await outbox(t, email);
        const verified = await start(t, 'signup/verify', { signUpId: json(started).signUpId, code: codeFrom(mail!) });
        const attemptId = expectStopped(verified, 'needs_second_factor_setup');
        const done = await setUp(attemptId);
        expect(decodeJwt(done.session.accessToken).payload.amr).toEqual(['email', 'totp']);
      },
      { mfa: 'optional', emailVerification: 'off' },
    );
  });

  it('SSO under mfa "required": sso/verify stops at the setup', async () => {
    await required(async () => {
      const login = `acct-${Math.random().toString(36).slice(2)}`;
      const email = uniqueEmail('sso').replace(/@.*/, '@corp.test');
      idp.accounts.set(login, { email, email_verified: true, given_name: 'Ada', family_name: 'Lovelace' });
      const started = await ssoStart(t, dev(), { connectionId });
      const answer = await new TestBrowser(t).signIn(json(started).url, login);
      const token = new URL(answer.location!).searchParams.get('token')!;
      const attemptId = expectStopped(await ssoVerify(t, dev(), token), 'needs_second_factor_setup');
      const done = await setUp(attemptId);
      expect(decodeJwt(done.session.accessToken).payload.amr).toEqual(['sso', 'totp']);
    });
  });

  it('invitation acceptance under mfa "required": the membership is made, the session waits for the setup', async () => {
    await required(async () => {
      const owner = await plainUser(t, undefined, 'owner');
      const org = await createOrg(t, owner.id, { name: 'Initech' });
      const address = uniqueEmail('invited');
      const invited = await t.call({
        method: 'POST',
        url: `/v1/organizations/${org.id}/invitations`,
        credential: dev().secretKey,
        payload: { email: address, role: 'member', redirectUrl: REDIRECT },
      });
      expect(invited.statusCode, invited.body).toBe(201);
      const [mail] = await outbox(t, address);
      const accepted = await start(t, 'invitations/accept', { token: tokenFrom(mail!), password: GOOD_PASSWORD });
      const attemptId = expectStopped(accepted, 'needs_second_factor_setup');
      const done = await setUp(attemptId);
      expect(decodeJwt(done.session.accessToken).payload.amr).toEqual(['email', 'totp']);
    });
  });

  it('mfa "off" asks nothing, even of a user who has TOTP', async () => {
    const user = await verifiedWithTotp('off');
    await withSettings(
      { mfa: 'off' },
      async () => {
        const signedIn = await signIn(t, user.email, GOOD_PASSWORD);
        expect(signedIn.statusCode, signedIn.body).toBe(200);
        expect(decodeJwt(json(signedIn).session.accessToken).payload.amr).toEqual(['pwd']);
      },
      { mfa: 'optional' },
    );
  });

  it('a replayed TOTP code at the second step is refused', async () => {
    const user = await verifiedWithTotp('replay');
    const code = totpCode(SECRET);
    expect((await secondFactor(t, { attemptId: await passwordAttempt(user.email), factor: 'totp', code })).statusCode).toBe(200);
    const replayed = await secondFactor(t, { attemptId: await passwordAttempt(user.email), factor: 'totp', code });
    expect(replayed.statusCode).toBe(401);
    expect(json(replayed).error.code).toBe('invalid_credentials');
  });

  it('one backup code raced on two attempts signs in once', async () => {
    const user = await withBackupCodes();
    const attempts = [await passwordAttempt(user.email), await passwordAttempt(user.email)];
    const answers = await Promise.all(
      attempts.map((attemptId) => secondFactor(t, { attemptId, factor: 'backup_code', code: user.backupCodes[0] })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
    expect(await issued(user.userId)).toBe(2); // the sign-up's session and one more
  });

  it('two concurrent completions of one attempt give one session', async () => {
    const user = await withBackupCodes();
    const attemptId = await passwordAttempt(user.email);
    const answers = await Promise.all(
      [user.backupCodes[1], user.backupCodes[2]].map((code) => secondFactor(t, { attemptId, factor: 'backup_code', code })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
    expect(await issued(user.userId)).toBe(2);
    // The loser's backup code was not spent: it still works on a new attempt.
    const loser = answers.find((a) => a.statusCode === 401)!;
    expect(json(loser).error.message).toMatch(START_AGAIN);
    const unused = (
      await Promise.all(
        [1, 2].map(
          async (i) =>
            (await secondFactor(t, { attemptId: await passwordAttempt(user.email), factor: 'backup_code', code: user.backupCodes[i] }))
              .statusCode,
        ),
      )
    ).sort();
    expect(unused).toEqual([200, 401]);
  });

  it('a spent attempt cannot be completed again', async () => {
    const user = await withBackupCodes();
    const attemptId = await passwordAttempt(user.email);
    expect((await secondFactor(t, { attemptId, factor: 'backup_code', code: user.backupCodes[3] })).statusCode).toBe(200);
    const again = await secondFactor(t, { attemptId, factor: 'backup_code', code: user.backupCodes[4] });
    expect(again.statusCode).toBe(401);
    expect(json(again).error).toMatchObject({ code: 'invalid_credentials', message: expect.stringMatching(START_AGAIN) });
  });

  it('an attempt of one environment is not completed in another', async () => {
    const user = await verifiedWithTotp('cross');
    const attemptId = await passwordAttempt(user.email);
    const elsewhere = await secondFactor(t, { attemptId, factor: 'totp', code: totpCode(SECRET) }, t.project.production);
    expect(elsewhere.statusCode).toBe(401);
    expect(json(elsewhere).error.code).toBe('invalid_credentials');
  });

  it('an attempt dies after 5 wrong codes: even the right code is then refused, saying to start again', async () => {
    const user = await verifiedWithTotp('guess');
    const attemptId = await passwordAttempt(user.email);
    for (let i = 0; i < 5; i++) {
      const wrong = await secondFactor(t, { attemptId, factor: 'totp', code: '000000' === totpCode(SECRET) ? '111111' : '000000' });
      expect(wrong.statusCode).toBe(401);
    }
    const right = await secondFactor(t, { attemptId, factor: 'totp', code: totpCode(SECRET) });
    expect(right.statusCode).toBe(401);
    expect(json(right).error).toMatchObject({ code: 'invalid_credentials', message: expect.stringMatching(START_AGAIN) });
    expect(await issued(user.id)).toBe(0);
  });

  it('racing wrong codes at one attempt: no more than 5 are ever compared', async () => {
    const user = await verifiedWithTotp('race-guess');
    const wrongCode = totpCode(SECRET) === '000000' ? '111111' : '000000';
    const attemptId = await passwordAttempt(user.email);
    const answers = await Promise.all(Array.from({ length: 9 }, () => secondFactor(t, { attemptId, factor: 'totp', code: wrongCode })));
    expect(answers.every((a) => a.statusCode === 401)).toBe(true);
    // Each comparison counts against the per-user throttle (10 in 15 minutes): had more than 5 been
    // compared, a second attempt would meet the 429 before its own 5 wrong codes are all judged.
    const next = await passwordAttempt(user.email);
    for (let i = 0; i < 5; i++) expect((await secondFactor(t, { attemptId: next, factor: 'totp', code: wrongCode })).statusCode).toBe(401);
  });

  it('guessing across attempts meets the per-user throttle: 429 with Retry-After, before any comparison', async () => {
    const user = await verifiedWithTotp('throttle');
    const wrongCode = totpCode(SECRET) === '000000' ? '111111' : '000000';
    for (const _ of [0, 1]) {
      const attemptId = await passwordAttempt(user.email);
      for (let i = 0; i < 5; i++) expect((await secondFactor(t, { attemptId, factor: 'totp', code: wrongCode })).statusCode).toBe(401);
    }
    const refused = await secondFactor(t, { attemptId: await passwordAttempt(user.email), factor: 'totp', code: totpCode(SECRET) });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('totp-setup on a needs_second_factor attempt is refused: a password alone never enrols a factor', async () => {
    const user = await withBackupCodes();
    const attemptId = await passwordAttempt(user.email);
    const setup = await start(t, 'signin/second-factor/totp-setup', { attemptId });
    expect(setup.statusCode).toBe(400);
    expect(setup.body).not.toContain('otpauth');
  });

  it('a made-up or expired-looking attempt id is refused like a spent one', async () => {
    const refused = await secondFactor(t, { attemptId: 'sia_madeup', factor: 'totp', code: '123456' });
    expect(refused.statusCode).toBe(401);
    expect(json(refused).error.message).toMatch(START_AGAIN);
  });

  it('factor "passkey" without a WebAuthn response, or with garbage, is 400, never a session', async () => {
    const user = await withBackupCodes();
    for (const body of [{}, { response: {} }, { response: 'x' }]) {
      const refused = await secondFactor(t, { attemptId: await passwordAttempt(user.email), factor: 'passkey', ...body });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(json(refused).error.code).toBe('invalid_request');
    }
  });
});
