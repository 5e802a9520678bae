import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox } from '../helpers/flows.js';
import { json } from '../helpers/identity.js';
import { actAs, createOrg, person } from '../helpers/organizations.js';

let domainCounter = 0;
function uniqueDomain(): string {
  domainCounter += 1;
  return `guess${domainCounter}-${Date.now().toString(36)}.example`;
}

/** Each test has an app of its own: the per-client count is the subject, and it must start at zero. */
describe('domain verification code guessing', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const as = (who: { accessToken: string }, method: 'POST' | 'DELETE', url: string, payload?: object) =>
    t.call({ method, url, credential: who.accessToken, ...(payload ? { payload } : {}) });
  const wrongCode = (real: string) => (real === '000000' ? '111111' : '000000');

  async function ownerOfNewOrg() {
    const owner = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId);
    await actAs(t, owner, org.id);
    return owner;
  }
  async function addDomain(owner: { accessToken: string }, name: string): Promise<{ id: string; code: string }> {
    const res = await as(owner, 'POST', '/v1/me/organization/domains', { name, enrollmentMode: 'automatic_invitation', email: `it@${name}` });
    expect(res.statusCode, res.body).toBe(201);
    return { id: json(res).id, code: codeFrom((await outbox(t, `it@${name}`))[0]!) };
  }

  it('deleting and re-adding a domain is no way to guess more: its wrong tries are counted per name, across deletion and organizations', async () => {
    const owner = await ownerOfNewOrg();
    const name = uniqueDomain();
    const first = await addDomain(owner, name);
    const verify = (id: string, code: string) => as(owner, 'POST', `/v1/me/organization/domains/${id}/verify`, { code });
    for (let i = 0; i < 5; i++) expect((await verify(first.id, wrongCode(first.code))).statusCode).toBe(401);
    expect((await as(owner, 'DELETE', `/v1/me/organization/domains/${first.id}`)).statusCode).toBe(200);

    // Re-added: a fresh code, but the name has used its allowance, so the code takes one try.
    const again = await addDomain(owner, name);
    const guess = await verify(again.id, wrongCode(again.code));
    expect(guess.statusCode).toBe(401);
    expect(json(guess).error.message).toContain('void');
    expect((await verify(again.id, again.code)).statusCode).toBe(401);

    // Another organization adding the same name gets one try per code too.
    const other = await ownerOfNewOrg();
    const elsewhere = await addDomain(other, name);
    const otherGuess = await as(other, 'POST', `/v1/me/organization/domains/${elsewhere.id}/verify`, { code: wrongCode(elsewhere.code) });
    expect(json(otherGuess).error.message).toContain('void');

    // The domain's real owner, who receives the code, still gets in with its one try.
    const real = await ownerOfNewOrg();
    const owned = await addDomain(real, name);
    const ok = await as(real, 'POST', `/v1/me/organization/domains/${owned.id}/verify`, { code: owned.code });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});

describe('domain verification code guessing from one client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('one client guessing across 5 new organizations (5 wrong codes each) is stopped with 429 rate_limited', async () => {
    const statuses: number[] = [];
    let limited: { headers: Record<string, unknown>; code: string } | undefined;
    for (let o = 0; o < 5; o++) {
      const owner = await person(t, undefined, 'owner');
      const org = await createOrg(t, owner.userId);
      await actAs(t, owner, org.id);
      const name = uniqueDomain();
      const created = await t.call({
        method: 'POST',
        url: '/v1/me/organization/domains',
        credential: owner.accessToken,
        payload: { name, enrollmentMode: 'automatic_invitation', email: `it@${name}` },
      });
      const real = codeFrom((await outbox(t, `it@${name}`))[0]!);
      for (let i = 0; i < 5; i++) {
        const res = await t.call({
          method: 'POST',
          url: `/v1/me/organization/domains/${json(created).id}/verify`,
          credential: owner.accessToken,
          payload: { code: real === '000000' ? '111111' : '000000' },
        });
        statuses.push(res.statusCode);
        if (res.statusCode === 429) limited ??= { headers: res.headers, code: json(res).error.code };
      }
    }
    // Ten wrong codes from one client start a lock: the eleventh guess is refused unexamined.
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(15).fill(429));
    expect(limited).toMatchObject({ code: 'rate_limited', headers: { 'retry-after': expect.any(String) } });
  });
});
