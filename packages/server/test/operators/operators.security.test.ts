import type { EnvironmentId } from '../../src/lib/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_PASSWORD, json, signUp, uniqueEmail } from '../helpers/identity.js';
import { testDb } from '../helpers/store.js';
import { CONSOLE_ORIGIN, consoleConfig, firstOperator, tokenOf } from './helpers.js';

describe(`operators: attacks (${testDb()})`, () => {
  let t: TestApp;
  let operator: Awaited<ReturnType<typeof firstOperator>>;
  let staleLink: string;

  beforeAll(async () => {
    t = await startTestApp();
    // Two starts before anyone used a link: two printed links.
    staleLink = (await t.app.operators.setupLinkIfNoOperator())!;
    operator = await firstOperator(t);
  });
  afterAll(() => t.close());

  const setupWith = async (url: string) =>
    json((await t.call({ method: 'POST', url: '/v1/console/setup', payload: { token: tokenOf(url), password: GOOD_PASSWORD } })));

  const setup = (token: string, email = uniqueEmail('intruder')) =>
    t.call({ method: 'POST', url: '/v1/console/setup', payload: { token, email, password: GOOD_PASSWORD } });

  it('operator by the back door: an operator cannot create an organization to invite non-operators into the operators environment', async () => {
    const created = await t.call({
      method: 'POST',
      url: '/v1/me/organizations',
      credential: operator.accessToken,
      headers: { origin: CONSOLE_ORIGIN },
      payload: { name: 'Back door' },
    });
    expect(created.statusCode, created.body).toBe(403);
    const operators = json(await t.call({ method: 'GET', url: '/v1/platform/operators', credential: t.platformKey }));
    expect(operators.data).toHaveLength(1);
  });

  it('a setup link cannot be used twice', async () => {
    const reused = await setup(tokenOf(operator.link));
    expect(reused.statusCode).toBe(401);
    expect(json(reused).error.code).toBe('unauthenticated');
  });

  it('an older printed setup link dies when the first operator is created', async () => {
    const late = await setup(tokenOf(staleLink));
    expect(late.statusCode).toBe(401);
    const guessed = await setup('gh_setup_' + 'A'.repeat(43));
    expect(guessed.statusCode).toBe(401);
    const operators = json(await t.call({ method: 'GET', url: '/v1/platform/operators', credential: t.platformKey }));
    expect(operators.data).toHaveLength(1);
  });

  it('only the hash of a setup link is stored', async () => {
    const rows = await t.store.db.selectFrom('operator_tokens').selectAll().execute();
    const token = tokenOf(operator.link);
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("an operator's token of a signed-out (revoked) session is refused at once", async () => {
    const { publishableKey } = await consoleConfig(t);
    const signIn = await t.call({
      method: 'POST',
      url: '/v1/auth/signin',
      credential: publishableKey,
      payload: { email: operator.email, password: GOOD_PASSWORD },
    });
    const session = json(signIn).session;
    const ok = await t.call({ method: 'GET', url: '/v1/platform/projects', credential: session.accessToken });
    expect(ok.statusCode).toBe(200);
    const out = await t.call({ method: 'POST', url: '/v1/auth/signout', credential: publishableKey, payload: { refreshToken: session.refreshToken } });
    expect(out.statusCode).toBe(204);
    const refused = await t.call({ method: 'GET', url: '/v1/platform/projects', credential: session.accessToken });
    expect(refused.statusCode).toBe(401);
    expect(json(refused).error.code).toBe('session_revoked');
  });

  it("a removed operator's token is refused at once", async () => {
    const invited = json(
      await t.call({ method: 'POST', url: '/v1/platform/operators/invitations', credential: t.platformKey, payload: { email: uniqueEmail('leaving') } }),
    );
    const created = await setupWith(invited.url);
    const { publishableKey } = await consoleConfig(t);
    const session = json(
      await t.call({ method: 'POST', url: '/v1/auth/signin', credential: publishableKey, payload: { email: invited.email, password: GOOD_PASSWORD } }),
    ).session;
    expect((await t.call({ method: 'GET', url: '/v1/platform/operators', credential: session.accessToken })).statusCode).toBe(200);
    const removed = await t.call({ method: 'DELETE', url: `/v1/platform/operators/${created.id}`, credential: operator.accessToken });
    expect(removed.statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: '/v1/platform/operators', credential: session.accessToken })).statusCode).toBe(401);
    // And the last operator stays.
    const last = await t.call({ method: 'DELETE', url: `/v1/platform/operators/${operator.userId}`, credential: operator.accessToken });
    expect(last.statusCode).toBe(403);
  });

  it("a normal environment's user token is not an operator's", async () => {
    const user = await signUp(t, { email: uniqueEmail('app-user') });
    for (const url of ['/v1/platform/projects', `/v1/platform/environments/${t.project.development.id}/users`, '/v1/platform/audit-log']) {
      const refused = await t.call({ method: 'GET', url, credential: user.accessToken });
      expect(refused.statusCode, url).toBe(403);
      expect(json(refused).error.code).toBe('credential_not_accepted');
    }
  });

  it('the platform key and secret keys sent with an Origin header are refused', async () => {
    const key = await t.call({ method: 'GET', url: '/v1/platform/projects', credential: t.platformKey, headers: { origin: CONSOLE_ORIGIN } });
    expect(key.statusCode).toBe(403);
    expect(json(key).error.code).toBe('credential_not_accepted');
    const sk = await t.call({ method: 'GET', url: '/v1/users', credential: t.project.development.secretKey, headers: { origin: CONSOLE_ORIGIN } });
    expect(sk.statusCode).toBe(403);
    expect(json(sk).error.code).toBe('credential_not_accepted');
    // And a secret key is not accepted by the platform's copies of its routes.
    const copy = await t.call({ method: 'GET', url: `/v1/platform/environments/${t.project.development.id}/users`, credential: t.project.development.secretKey });
    expect(copy.statusCode).toBe(403);
  });

  it("an operator's token from another origin is refused", async () => {
    const refused = await t.call({
      method: 'GET',
      url: '/v1/platform/projects',
      headers: { authorization: `Bearer ${operator.accessToken}`, origin: 'https://evil.test' },
    });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('origin_not_allowed');
  });

  it("the operators' internal environment is hidden from the platform API", async () => {
    const { environmentId } = await consoleConfig(t);
    const environment = await t.tenancy.getEnvironment(environmentId);
    const projectId = environment.projectId;
    const listed = json(await t.call({ method: 'GET', url: '/v1/platform/projects?limit=100', credential: t.platformKey }));
    expect(listed.data.map((p: { id: string }) => p.id)).not.toContain(projectId);
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/v1/platform/projects/${projectId}`],
      ['GET', `/v1/platform/projects/${projectId}/usage`],
      ['DELETE', `/v1/platform/projects/${projectId}`],
      ['GET', `/v1/platform/environments/${environmentId}`],
      ['PATCH', `/v1/platform/environments/${environmentId}`, { signUp: true }],
      ['POST', `/v1/platform/environments/${environmentId}/secret-keys`],
      ['GET', `/v1/platform/environments/${environmentId}/emails`],
      ['GET', `/v1/platform/environments/${environmentId}/users`],
      ['POST', `/v1/platform/environments/${environmentId}/users`, { email: uniqueEmail(), password: GOOD_PASSWORD }],
    ];
    for (const [method, url, payload] of attempts) {
      for (const auth of [{ credential: t.platformKey }, { headers: { authorization: `Bearer ${operator.accessToken}` } }]) {
        const response = await t.call({ method: method as 'GET', url, ...auth, ...(payload ? { payload: payload as object } : {}) });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
      }
    }
    // Sign-up stays closed: operators come from the setup link or an invitation only.
    const signUpAttempt = await t.call({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: environment.publishableKey,
      payload: { email: uniqueEmail(), password: GOOD_PASSWORD },
    });
    expect(signUpAttempt.statusCode).toBe(403);
  });
});

describe(`operators: two printed setup links used at once (${testDb()})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('race: exactly one first operator, the other link refused with 401 (no deadlock, no 500)', async () => {
    const links = [(await t.app.operators.setupLinkIfNoOperator())!, (await t.app.operators.setupLinkIfNoOperator())!];
    const answers = await Promise.all(
      links.map((link) =>
        t.call({
          method: 'POST',
          url: '/v1/console/setup',
          payload: { token: tokenOf(link), email: uniqueEmail('racer'), password: GOOD_PASSWORD },
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 401]);
    const operators = json(await t.call({ method: 'GET', url: '/v1/platform/operators', credential: t.platformKey }));
    expect(operators.data).toHaveLength(1);
  });
});

describe(`operators: removing the last two at once (${testDb()})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await firstOperator(t);
  });
  afterAll(() => t.close());

  it('two removals at once of the only two operators: one wins, the other is refused, and an operator stays', async () => {
    const invited = json(
      await t.call({
        method: 'POST',
        url: '/v1/platform/operators/invitations',
        credential: t.platformKey,
        payload: { email: uniqueEmail('second') },
      }),
    );
    expect(
      (await t.call({ method: 'POST', url: '/v1/console/setup', payload: { token: tokenOf(invited.url), password: GOOD_PASSWORD } }))
        .statusCode,
    ).toBe(201);
    const operators = json(await t.call({ method: 'GET', url: '/v1/platform/operators', credential: t.platformKey })).data as {
      id: string;
    }[];
    expect(operators).toHaveLength(2);

    const removals = await Promise.all(
      operators.map((o) => t.call({ method: 'DELETE', url: `/v1/platform/operators/${o.id}`, credential: t.platformKey })),
    );
    expect(removals.map((r) => r.statusCode).sort()).toEqual([204, 403]);
    expect(json(removals.find((r) => r.statusCode === 403)!).error.message).toMatch(/last operator/);
    expect(json(await t.call({ method: 'GET', url: '/v1/platform/operators', credential: t.platformKey })).data).toHaveLength(1);
  });
});

describe(`operators: locked out of the console (${testDb()})`, () => {
  let t: TestApp;
  let operator: Awaited<ReturnType<typeof firstOperator>>;
  beforeAll(async () => {
    t = await startTestApp();
    operator = await firstOperator(t);
  });
  afterAll(() => t.close());

  it('password lockout: after six wrong passwords an operator still gets in with an emailed code, and reaches the platform API', async () => {
    const { publishableKey, environmentId } = await consoleConfig(t);
    const post = (url: string, payload: object) => t.call({ method: 'POST', url, credential: publishableKey, headers: { origin: CONSOLE_ORIGIN }, payload });
    let last = 0;
    for (let i = 0; i < 7; i++) last = (await post('/v1/auth/signin', { email: operator.email, password: `wrong password ${i}` })).statusCode;
    expect(last).toBe(429);
    expect((await post('/v1/auth/signin', { email: operator.email, password: GOOD_PASSWORD })).statusCode).toBe(429);

    expect((await post('/v1/auth/email-code', { email: operator.email })).statusCode).toBe(202);
    const mail = await t.store.db
      .selectFrom('email_outbox')
      .select(['text_body'])
      .where('environment_id', '=', environmentId as EnvironmentId)
      .where('to_address', '=', operator.email)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    const code = /^(\d{6})$/m.exec(mail.text_body)![1]!;
    const signedIn = await post('/v1/auth/email-code/verify', { email: operator.email, code });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const listed = await t.call({ method: 'GET', url: '/v1/platform/operators', headers: { authorization: `Bearer ${json(signedIn).session.accessToken}`, origin: CONSOLE_ORIGIN } });
    expect(listed.statusCode).toBe(200);
  });

  it('the emailed code makes no operator: an address that is not an operator gets a code-shaped answer and no account', async () => {
    const { publishableKey, environmentId } = await consoleConfig(t);
    const stranger = uniqueEmail('stranger');
    const answer = await t.call({ method: 'POST', url: '/v1/auth/email-code', credential: publishableKey, headers: { origin: CONSOLE_ORIGIN }, payload: { email: stranger } });
    expect(answer.statusCode).toBe(202);
    const users = await t.store.db.selectFrom('users').select('id').where('environment_id', '=', environmentId as EnvironmentId).execute();
    expect(users).toHaveLength(1);
  });
});
