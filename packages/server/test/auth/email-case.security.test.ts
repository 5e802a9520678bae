import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THROTTLE } from '../../src/mail/outbox.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { GOOD_PASSWORD, json, signUp } from '../helpers/identity.js';

let counter = 0;
function address(tag: string): string {
  counter += 1;
  return `${tag}.${counter}.${Date.now().toString(36)}@example.test`;
}

/** The n-th spelling of an address in other cases: letters of its local part flipped by the bits of n. */
function spelling(email: string, n: number): string {
  const at = email.indexOf('@');
  let bit = 0;
  const local = [...email.slice(0, at)].map((c) => {
    if (c.toLowerCase() === c.toUpperCase()) return c;
    return (n >> bit++) & 1 ? c.toUpperCase() : c.toLowerCase();
  });
  return local.join('') + email.slice(at);
}

describe('attacks on email case', { timeout: 30_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const sk = () => t.project.development.secretKey;
  const signUpRaw = (email: string) =>
    t.call({ method: 'POST', url: '/v1/auth/signup', credential: t.project.development.publishableKey, payload: { email, password: GOOD_PASSWORD } });
  const createUser = (email: string) => t.call({ method: 'POST', url: '/v1/users', credential: sk(), payload: { email } });
  const usersWith = async (email: string) =>
    json(await t.call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(email)}`, credential: sk() })).data as { id: string }[];

  function expectEmailConflict(response: Awaited<ReturnType<TestApp['call']>>) {
    expect(response.statusCode, response.body).toBe(409);
    expect(json(response).error).toMatchObject({ code: 'conflict', details: { fields: ['email'] } });
  }

  it('registering a second account by changing the case of a taken address is refused', async () => {
    const victim = await signUp(t, { email: address('victim') });
    expectEmailConflict(await signUpRaw(victim.email.toUpperCase()));
    expectEmailConflict(await signUpRaw(spelling(victim.email, 5)));
    expectEmailConflict(await createUser(victim.email.toUpperCase()));
    expect(await usersWith(victim.email)).toHaveLength(1);
  });

  it('registering a second account by changing the case of non-ASCII letters is refused', async () => {
    const created = await createUser('élodie.ßtrauß@example.test');
    expect(created.statusCode).toBe(201);
    expectEmailConflict(await createUser('ÉLODIE.ßTRAUß@example.test'));
    // U+1E9E, capital sharp s, lowercases to ß.
    expectEmailConflict(await createUser('Élodie.\u1E9Etrau\u00DF@example.test'));
  });

  it('registering a second account with a decomposed spelling of the same address is refused', async () => {
    // Hangul: the syllable U+AC00 and its two jamo U+1100 U+1161 are the same text (NFC), and all are letters.
    expect((await createUser('\uAC00.composed@example.test')).statusCode).toBe(201);
    expectEmailConflict(await createUser('\u1100\u1161.composed@example.test'));
  });

  it("taking over another user's address by changing one's own to another case of it is refused", async () => {
    const victim = json(await createUser(address('owner')));
    const attacker = json(await createUser(address('attacker')));
    const patch = await t.call({
      method: 'PATCH',
      url: `/v1/users/${attacker.id}`,
      credential: sk(),
      payload: { email: victim.email.toUpperCase() },
    });
    expectEmailConflict(patch);
    // Changing one's own address to another case of itself is allowed.
    const own = await t.call({ method: 'PATCH', url: `/v1/users/${victim.id}`, credential: sk(), payload: { email: spelling(victim.email, 3) } });
    expect(own.statusCode, own.body).toBe(200);
    expect(json(own).email).toBe(spelling(victim.email, 3));
  });

  it('a magic link for another case of a known address signs into that account, never a new one', async () => {
    const victim = await signUp(t, { email: address('known') });
    await start(t, 'magic-link', { email: victim.email.toUpperCase(), redirectUrl: REDIRECT });
    const [email] = await outbox(t, victim.email);
    // Mail goes to the account's own address, so only its owner can use the link.
    expect(email).toMatchObject({ kind: 'magic_link', to: victim.email });
    const res = await start(t, 'magic-link/verify', { token: tokenFrom(email!) });
    expect(json(res).user.id).toBe(victim.userId);
    expect(await usersWith(victim.email)).toHaveLength(1);
  });

  it('sign-up links sent to two cases of a new address create one account', async () => {
    const fresh = address('fresh');
    await start(t, 'magic-link', { email: fresh, redirectUrl: REDIRECT });
    await start(t, 'magic-link', { email: fresh.toUpperCase(), redirectUrl: REDIRECT });
    const links = await outbox(t, fresh);
    expect(links.map((m) => m.kind)).toEqual(['sign_up_link', 'sign_up_link']);
    const first = json(await start(t, 'magic-link/verify', { token: tokenFrom(links[0]!) }));
    const second = json(await start(t, 'magic-link/verify', { token: tokenFrom(links[1]!) }));
    expect(second.user.id).toBe(first.user.id);
    expect(await usersWith(fresh)).toHaveLength(1);
  });

  it('the per-address email throttle cannot be dodged by changing case', async () => {
    const unknown = address('flooded');
    for (let n = 0; n <= THROTTLE.perAddress; n += 1) {
      expect((await start(t, 'magic-link', { email: spelling(unknown, n), redirectUrl: REDIRECT })).statusCode).toBe(202);
    }
    expect(await outbox(t, unknown)).toHaveLength(THROTTLE.perAddress);

    const known = await signUp(t, { email: address('floodedknown') });
    for (let n = 0; n <= THROTTLE.perAddress; n += 1) {
      await start(t, 'email-code', { email: spelling(known.email, n) });
    }
    expect(await outbox(t, known.email)).toHaveLength(THROTTLE.perAddress);
  });
});
