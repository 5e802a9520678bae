import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, json, me, signIn, signUp } from '../helpers/identity.js';
import { actAs, createOrg, person, type Person } from '../helpers/organizations.js';

let counter = 0;
/** A fresh address with capitals in its local part, as a person might type it. */
function mixedCase(tag: string): string {
  counter += 1;
  return `${tag}.Case${counter}.${Date.now().toString(36)}@example.test`;
}

/** The same address in other cases: all lower, all upper (the domain is lowercased by normalization anyway). */
const lower = (address: string) => address.toLowerCase();
const upper = (address: string) => address.toUpperCase();

describe('emails match whatever their case, and are shown as typed', { timeout: 30_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;

  it('password sign-in finds the account in any case; the address stays as typed', async () => {
    const typed = mixedCase('Ada');
    const user = await signUp(t, { email: typed });
    expect(user.email).toBe(typed);
    for (const spelling of [lower(typed), upper(typed), typed]) {
      const res = await signIn(t, spelling, GOOD_PASSWORD);
      expect(res.statusCode, spelling).toBe(200);
      expect(json(res).user).toEqual({ id: user.userId, email: typed });
    }
    expect(json(await me(t, user.accessToken)).user.email).toBe(typed);
    const listed = json(await t.call({ method: 'GET', url: `/v1/users/${user.userId}`, credential: sk() }));
    expect(listed.email).toBe(typed);
  });

  it('a magic link started in another case reaches the account, at its own address', async () => {
    const typed = mixedCase('Grace');
    const user = await signUp(t, { email: typed });
    expect((await start(t, 'magic-link', { email: upper(typed), redirectUrl: REDIRECT })).statusCode).toBe(202);
    // The dev outbox filter matches any case too.
    const [email] = await outbox(t, lower(typed));
    expect(email).toMatchObject({ to: typed, kind: 'magic_link' });
    const res = await start(t, 'magic-link/verify', { token: tokenFrom(email!) });
    expect(res.statusCode).toBe(200);
    expect(json(res).user).toEqual({ id: user.userId, email: typed });
  });

  it('an email code started in one case verifies in another', async () => {
    const typed = mixedCase('Hopper');
    const user = await signUp(t, { email: typed });
    expect((await start(t, 'email-code', { email: lower(typed) })).statusCode).toBe(202);
    const [email] = await outbox(t, typed);
    expect(email).toMatchObject({ to: typed, kind: 'email_code' });
    const res = await start(t, 'email-code/verify', { email: upper(typed), code: codeFrom(email!) });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user.id).toBe(user.userId);
  });

  it('a new address signs up through a code and keeps the case it was typed in', async () => {
    const typed = mixedCase('Newcomer');
    await start(t, 'email-code', { email: typed });
    const [email] = await outbox(t, upper(typed));
    expect(email).toMatchObject({ to: typed, kind: 'sign_up_code' });
    const res = await start(t, 'email-code/verify', { email: lower(typed), code: codeFrom(email!) });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user.email).toBe(typed);
  });

  it('a password reset started in another case resets the account', async () => {
    const typed = mixedCase('Lovelace');
    const user = await signUp(t, { email: typed });
    expect((await start(t, 'password-reset', { email: upper(typed), redirectUrl: REDIRECT })).statusCode).toBe(202);
    const [email] = await outbox(t, typed);
    expect(email!.kind).toBe('password_reset');
    const newPassword = 'a brand new passphrase';
    const done = await start(t, 'password-reset/complete', { token: tokenFrom(email!), newPassword });
    expect(done.statusCode, done.body).toBe(200);
    const res = await signIn(t, lower(typed), newPassword);
    expect(res.statusCode).toBe(200);
    expect(json(res).user.id).toBe(user.userId);
  });

  it('adds a member by email in any case, with a secret key and with a session', async () => {
    const owner: Person = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId, { name: 'Case Co' });
    await actAs(t, owner, org.id);

    const bySecretKey = json(await t.call({ method: 'POST', url: '/v1/users', credential: sk(), payload: { email: mixedCase('Sk') } }));
    const added = await t.call({
      method: 'POST',
      url: `/v1/organizations/${org.id}/members`,
      credential: sk(),
      payload: { email: upper(bySecretKey.email), role: 'member' },
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(json(added)).toMatchObject({ userId: bySecretKey.id, email: bySecretKey.email });

    const bySession = json(await t.call({ method: 'POST', url: '/v1/users', credential: sk(), payload: { email: mixedCase('St') } }));
    const viaSession = await t.call({
      method: 'POST',
      url: '/v1/me/organization/members',
      credential: owner.accessToken,
      payload: { email: lower(bySession.email), role: 'member' },
    });
    expect(viaSession.statusCode, viaSession.body).toBe(201);
    expect(json(viaSession)).toMatchObject({ userId: bySession.id, email: bySession.email });
  });

  it('the users filter and search match in any case, non-ASCII letters included, on both databases', async () => {
    const project = await t.createProject('case filters');
    const key = project.development.secretKey;
    const create = (payload: object) => t.call({ method: 'POST', url: '/v1/users', credential: key, payload });
    const ada = json(await create({ email: 'Ada.Byron@example.test', firstName: 'Ada' }));
    const elodie = json(await create({ email: 'Élodie.Dupré@example.test' }));
    const list = async (query: string) =>
      json(await t.call({ method: 'GET', url: `/v1/users?${query}`, credential: key })).data.map((u: { id: string }) => u.id);

    expect(await list('email=ada.byron@EXAMPLE.test')).toEqual([ada.id]);
    expect(await list(`email=${encodeURIComponent('ADA.BYRON@example.test')}`)).toEqual([ada.id]);
    expect(await list(`email=${encodeURIComponent('élodie.dupré@example.test')}`)).toEqual([elodie.id]);
    expect(await list(`email=${encodeURIComponent('ÉLODIE.DUPRÉ@EXAMPLE.TEST')}`)).toEqual([elodie.id]);
    expect(await list('query=BYRON')).toEqual([ada.id]);
    expect(await list('query=byron')).toEqual([ada.id]);
    expect(await list(`query=${encodeURIComponent('ÉLODIE')}`)).toEqual([elodie.id]);
    expect(await list(`query=${encodeURIComponent('élodie.dupré')}`)).toEqual([elodie.id]);
    // Shown as typed.
    expect(json(await t.call({ method: 'GET', url: `/v1/users/${elodie.id}`, credential: key })).email).toBe('Élodie.Dupré@example.test');
  });
});
