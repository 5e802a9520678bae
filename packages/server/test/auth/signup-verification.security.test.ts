import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox } from '../helpers/flows.js';
import { GOOD_PASSWORD, json, me, signIn, uniqueEmail } from '../helpers/identity.js';
import { plainUser } from '../helpers/organizations.js';

describe('sign-up with emailVerification "required"', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, rateLimit: false });
    await t.setSettings(t.project.development.id, { emailVerification: 'required' });
  });
  afterAll(() => t.close());

  const signUp = (payload: object) =>
    t.call({ method: 'POST', url: '/v1/auth/signup', credential: t.project.development.publishableKey, payload });
  const verify = (payload: object) =>
    t.call({ method: 'POST', url: '/v1/auth/signup/verify', credential: t.project.development.publishableKey, payload });

  it('is what new environments get; existing settings without the field read as "off"', async () => {
    const project = await t.createProject('Fresh');
    // The test helper turns it off for the other suites; a project made by the platform API has it on.
    const created = await t.call({ method: 'POST', url: '/v1/platform/projects', credential: t.platformKey, payload: { name: 'New' } });
    const environments = created.json().environments as { id?: string; environment?: { id: string } }[];
    for (const e of environments) {
      const id = e.environment?.id ?? e.id;
      const read = await t.call({ method: 'GET', url: `/v1/platform/environments/${id}`, credential: t.platformKey });
      expect(read.json().emailVerification).toBe('required');
    }
    const env = await t.call({ method: 'GET', url: '/v1/environment', credential: project.development.publishableKey });
    expect(env.json().emailVerification).toBe('off');
  });

  it('answers 202 with a signUpId, emails a code, and creates the account only when the code comes back', async () => {
    const email = uniqueEmail('verified');
    const started = await signUp({ email, password: GOOD_PASSWORD, firstName: 'Vera' });
    expect(started.statusCode, started.body).toBe(202);
    expect(json(started)).toEqual({ status: 'verification_required', signUpId: expect.stringMatching(/^su_/) });
    expect(
      json(
        await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(email)}`, credential: t.project.development.secretKey }),
      ).data,
    ).toEqual([]);
    const [mail] = await outbox(t, email);
    expect(mail!.kind).toBe('sign_up_verification');

    const wrong = await verify({ signUpId: json(started).signUpId, code: codeFrom(mail!) === '000000' ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(json(wrong).error.message).toContain('4 tries left');

    const done = await verify({ signUpId: json(started).signUpId, code: codeFrom(mail!) });
    expect(done.statusCode, done.body).toBe(201);
    expect(json(await me(t, json(done).session.accessToken)).user).toMatchObject({
      email,
      firstName: 'Vera',
      emailVerified: true,
      passwordEnabled: true,
    });
    expect((await signIn(t, email, GOOD_PASSWORD)).statusCode).toBe(200);
    // Single use.
    expect((await verify({ signUpId: json(started).signUpId, code: codeFrom(mail!) })).statusCode).toBe(401);
  });

  it('is no enumeration oracle: a taken and a free address get the same status, body shape, headers and email', async () => {
    const taken = (await plainUser(t, undefined, 'taken')).email;
    const free = uniqueEmail('free');
    const answers = [];
    for (const email of [taken, free]) {
      const res = await signUp({ email, password: GOOD_PASSWORD });
      answers.push({
        status: res.statusCode,
        keys: Object.keys(json(res)).sort(),
        status2: json(res).status,
        headers: Object.keys(res.headers).sort(),
      });
    }
    expect(answers[0]).toEqual(answers[1]);
    const mails = await Promise.all([taken, free].map(async (a) => (await outbox(t, a))[0]!));
    const shape = (m: { subject: string; text: string; kind: string }) => ({
      subject: m.subject,
      kind: m.kind,
      text: m.text.replace(/\d{6}/, '######'),
    });
    expect(shape(mails[0]!)).toEqual(shape(mails[1]!));
  });

  it('a taken address: the code proves the mailbox, and verifying answers 409 (sign in instead)', async () => {
    const taken = (await plainUser(t, undefined, 'owner')).email;
    const started = await signUp({ email: taken, password: GOOD_PASSWORD });
    const res = await verify({ signUpId: json(started).signUpId, code: codeFrom((await outbox(t, taken))[0]!) });
    expect(res.statusCode).toBe(409);
    expect(json(res).error.message).toContain('Sign in instead');
  });

  it('an unverified attempt blocks nobody: another sign-up of the same address goes ahead', async () => {
    const email = uniqueEmail('twice');
    const first = json(await signUp({ email, password: GOOD_PASSWORD }));
    const second = json(await signUp({ email, password: `${GOOD_PASSWORD} 2` }));
    const code = codeFrom((await outbox(t, email))[0]!);
    expect((await verify({ signUpId: second.signUpId, code })).statusCode).toBe(201);
    // The first attempt's code cannot create a second account.
    const firstCode = codeFrom((await outbox(t, email))[1]!);
    expect((await verify({ signUpId: first.signUpId, code: firstCode })).statusCode).toBe(409);
  });

  it('expires after 10 minutes, and a code is tied to its own attempt', async () => {
    const a = uniqueEmail('a');
    const b = uniqueEmail('b');
    const startedA = json(await signUp({ email: a, password: GOOD_PASSWORD }));
    await signUp({ email: b, password: GOOD_PASSWORD });
    const codeB = codeFrom((await outbox(t, b))[0]!);
    const crossed = await verify({ signUpId: startedA.signUpId, code: codeB });
    if (codeB !== codeFrom((await outbox(t, a))[0]!)) expect(crossed.statusCode).toBe(401);
    clock.advance(10 * 60_000 + 1);
    expect((await verify({ signUpId: startedA.signUpId, code: codeFrom((await outbox(t, a))[0]!) })).statusCode).toBe(401);
  });

  it('refuses a weak password and bad fields before sending anything', async () => {
    const email = uniqueEmail('weak');
    const weak = await signUp({ email, password: 'password' });
    expect(weak.statusCode).toBe(422);
    expect(await outbox(t, email)).toEqual([]);
  });
});
