import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { json, uniqueEmail } from '../helpers/identity.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { readRedirectRequest, startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { createConnection, enableSso, landing, postAcs, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

/**
 * The life of a sign-in attempt, on the app's clock: a start expires after 10 minutes, its handoff
 * token after 5, and expired starts are swept rather than kept forever.
 */
describe(`SSO attempts expire and are swept (${testDb()})`, () => {
  const clock = testClock();
  let t: TestApp;
  let oidcIdp: TestOidcIdp;
  let samlIdp: TestIdp;
  let oidc: { id: string; redirectUri: string };
  let saml: { id: string; acsUrl: string; spEntityId: string };

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    oidcIdp = await startOidcIdp();
    samlIdp = await startTestIdp({ ssoUrl: 'https://idp.corp.test/sso' });
    await enableSso(t, t.project.development);
    oidc = json(await createConnection(t, t.project.development, { type: 'oidc', name: 'Corp OIDC', domains: ['oidc.test'], issuer: oidcIdp.issuer, clientId: 'gatehouse', clientSecret: 'secret' }));
    oidcIdp.setClient({ clientId: 'gatehouse', clientSecret: 'secret', redirectUri: oidc.redirectUri });
    saml = json(await createConnection(t, t.project.development, { type: 'saml', name: 'Corp SAML', domains: ['saml.test'], idpMetadataXml: samlIdp.metadataXml }));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await oidcIdp.close();
  });

  const acs = () => new URL(saml.acsUrl).pathname;
  const samlEmail = (tag: string) => uniqueEmail(tag).replace(/@.*/, '@saml.test');
  const attempts = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('sso_attempts')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('environment_id', '=', t.project.development.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  async function samlStart(email: string) {
    const started = await ssoStart(t, t.project.development, { email });
    expect(started.statusCode, started.body).toBe(200);
    return readRedirectRequest(json(started).url);
  }

  it('an OIDC state used 10 minutes after its start is refused (400, no redirect)', async () => {
    const id = `acct-${Math.random().toString(36).slice(2)}`;
    oidcIdp.accounts.set(id, { email: uniqueEmail('late').replace(/@.*/, '@oidc.test'), email_verified: true });
    const url = json(await ssoStart(t, t.project.development, { connectionId: oidc.id })).url;
    const callbackUrl = await new TestBrowser(t).codeFor(url, id);
    clock.advance(10 * 60_000 + 1);
    const late = await t.call({ method: 'GET', url: callbackUrl.slice('http://gatehouse.test'.length) });
    expect(late.statusCode).toBe(400);
    expect(json(late).error.code).toBe('invalid_request');
  });

  it('a SAML response to a start 10 minutes old is refused', async () => {
    const email = samlEmail('late');
    const request = await samlStart(email);
    clock.advance(10 * 60_000 + 1);
    const response = await samlIdp.issue(saml, { inResponseTo: request.id, nameId: email });
    const posted = await postAcs(t, acs(), { SAMLResponse: response, RelayState: request.relayState! });
    // Refused whether the expired start is still on file (error=replayed) or already swept (400).
    if (posted.statusCode === 303) expect(landing(posted).token).toBeNull();
    else expect(posted.statusCode).toBe(400);
  });

  it('a handoff token presented after 5 minutes is refused', async () => {
    const email = samlEmail('handoff');
    const request = await samlStart(email);
    const back = landing(await postAcs(t, acs(), { SAMLResponse: await samlIdp.issue(saml, { inResponseTo: request.id, nameId: email }), RelayState: request.relayState! }));
    expect(back.token).toBeTruthy();
    clock.advance(5 * 60_000 + 1);
    expect((await ssoVerify(t, t.project.development, back.token!)).statusCode).toBe(401);
  });

  it('expired starts do not accumulate: the next start sweeps them', async () => {
    for (let i = 0; i < 3; i++) await samlStart(samlEmail(`pile-${i}`));
    expect(await attempts()).toBeGreaterThanOrEqual(3);
    // Past the start's life and the handoff token's.
    clock.advance(16 * 60_000);
    await samlStart(samlEmail('sweeper'));
    expect(await attempts()).toBe(1);
  });
});
