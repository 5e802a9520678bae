import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { decodeResponse, encodeResponse, readRedirectRequest, startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { createConnection, enableSso, landing, postAcs, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

describe(`SAML single sign-on attacks through the API (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestIdp;
  let other: TestProject;
  let connection: { id: string; acsUrl: string; spEntityId: string };
  let otherConnection: { id: string; acsUrl: string; spEntityId: string };

  beforeAll(async () => {
    t = await startTestApp();
    idp = await startTestIdp({ ssoUrl: 'https://idp.corp.test/sso' });
    other = await t.createProject('Other');
    await enableSso(t, t.project.development);
    await enableSso(t, other.development);
    connection = json(await createConnection(t, t.project.development, { type: 'saml', name: 'Corp', domains: ['corp.test'], idpMetadataXml: idp.metadataXml }));
    otherConnection = json(await createConnection(t, other.development, { type: 'saml', name: 'Corp', domains: ['corp.test'], idpMetadataXml: idp.metadataXml }));
  }, 60_000);
  afterAll(() => t.close());

  const path = (url: string) => new URL(url).pathname;
  const sp = (c = connection) => ({ spEntityId: c.spEntityId, acsUrl: c.acsUrl });
  const corpEmail = (tag: string) => uniqueEmail(tag).replace(/@.*/, '@corp.test');

  async function begin(email: string, project = t.project) {
    const started = await ssoStart(t, project.development, { email });
    expect(started.statusCode, started.body).toBe(200);
    return readRedirectRequest(json(started).url);
  }

  it('a replayed response (same RelayState, same assertion) is refused the second time', async () => {
    const email = corpEmail('replay');
    const request = await begin(email);
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email });
    expect(landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! })).token).toBeTruthy();
    const again = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    expect(again.token).toBeNull();
    expect(again.error).toBe('replayed');
  });

  it('an assertion for another audience is refused', async () => {
    const email = corpEmail('audience');
    const request = await begin(email);
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email, audience: 'https://other-sp.test' });
    const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    expect(back.token).toBeNull();
    expect(back.error).toBe('invalid_response');
  });

  it('an expired assertion is refused', async () => {
    const email = corpEmail('expired');
    const request = await begin(email);
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email, conditionsNotOnOrAfter: -60_000, confirmationNotOnOrAfter: -60_000 });
    expect(landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! })).error).toBe('invalid_response');
  });

  it('NameID edited after signing is refused', async () => {
    const request = await begin('mallory@corp.test');
    const signed = await idp.issue(sp(), { inResponseTo: request.id, nameId: 'mallory@corp.test' });
    const forged = encodeResponse(decodeResponse(signed).replace('mallory@corp.test', 'ceo@corp.test'));
    const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: forged, RelayState: request.relayState! }));
    expect(back.token).toBeNull();
    expect(back.error).toBe('invalid_response');
  });

  it('an unsolicited (IdP-initiated) response is refused: 400, no redirect, no session', async () => {
    const response = await idp.issue(sp(), { nameId: corpEmail('unsolicited') });
    const posted = await postAcs(t, path(connection.acsUrl), { SAMLResponse: response });
    expect(posted.statusCode).toBe(400);
    expect(json(posted).error.code).toBe('invalid_request');
  });

  it('a tampered or unknown RelayState answers 400 invalid_request (no trusted redirectUrl)', async () => {
    const email = corpEmail('relay');
    const request = await begin(email);
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email });
    const posted = await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: `${request.relayState!.slice(0, -2)}xx` });
    expect(posted.statusCode).toBe(400);
    expect(json(posted).error.code).toBe('invalid_request');
  });

  it("cross-environment: another environment's start cannot complete at this connection, and its token does not verify here", async () => {
    const email = corpEmail('cross');
    const foreign = await begin(email, other);
    const response = await idp.issue(sp(), { inResponseTo: foreign.id, nameId: email });
    const posted = await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: foreign.relayState! });
    expect(posted.statusCode).toBe(400);
    // Completed where it belongs, the token is refused by this environment's key.
    const own = await postAcs(t, path(otherConnection.acsUrl), { SAMLResponse: await idp.issue(sp(otherConnection), { inResponseTo: foreign.id, nameId: email }), RelayState: foreign.relayState! });
    const token = landing(own).token!;
    expect((await ssoVerify(t, t.project.development, token)).statusCode).toBe(401);
    expect((await ssoVerify(t, other.development, token)).statusCode).toBe(200);
  });

  it('login swapping: a response to another browser\'s request, posted with this browser\'s RelayState, is refused', async () => {
    const mine = await begin(corpEmail('mine'));
    const theirs = await begin('attacker@corp.test');
    const response = await idp.issue(sp(), { inResponseTo: theirs.id, nameId: 'attacker@corp.test' });
    expect(landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: mine.relayState! })).error).toBe('request_mismatch');
  });

  it('linking refusal: an existing user whose domain the connection does not list gets error=account_exists', async () => {
    const email = uniqueEmail('outsider').replace(/@.*/, '@partner.test');
    await signUp(t, { email });
    const request = await begin('x@corp.test');
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email });
    const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    expect(back.token).toBeNull();
    expect(back.error).toBe('account_exists');
  });

  it('no account is created for an email outside the connection domains', async () => {
    const request = await begin('y@corp.test');
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: uniqueEmail('squat').replace(/@.*/, '@victim.test') });
    expect(landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! })).error).toBe('email_not_verified');
  });

  it('an enabled IdP-initiated sign-in is accepted once; its replay is refused', async () => {
    const created = await createConnection(t, t.project.development, {
      type: 'saml',
      name: 'Portal',
      domains: ['portal.test'],
      idpMetadataXml: idp.metadataXml,
      allowIdpInitiated: true,
      idpInitiatedRedirectUrl: 'https://app.example.test/portal',
    });
    expect(created.statusCode, created.body).toBe(201);
    const portal = json(created);
    const response = await idp.issue(sp(portal), { nameId: uniqueEmail('portal').replace(/@.*/, '@portal.test') });
    const first = landing(await postAcs(t, path(portal.acsUrl), { SAMLResponse: response }));
    expect(first.url.pathname).toBe('/portal');
    expect((await ssoVerify(t, t.project.development, first.token!)).statusCode).toBe(200);
    expect(landing(await postAcs(t, path(portal.acsUrl), { SAMLResponse: response })).error).toBe('replayed');
  });
});
