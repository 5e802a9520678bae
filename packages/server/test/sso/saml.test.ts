import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signUp, uniqueEmail } from '../helpers/identity.js';
import { makeSigningMaterial, readRedirectRequest, startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { createConnection, enableSso, landing, postAcs, REDIRECT_URL, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';

describe(`SAML single sign-on through the API (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestIdp;
  let connection: { id: string; acsUrl: string; spEntityId: string; spMetadataUrl: string };

  beforeAll(async () => {
    t = await startTestApp();
    idp = await startTestIdp({ ssoUrl: 'https://idp.corp.test/sso' });
    await enableSso(t, t.project.development);
    const created = await createConnection(t, t.project.development, { type: 'saml', name: 'Corp', domains: ['corp.test'], idpMetadataXml: idp.metadataXml });
    expect(created.statusCode, created.body).toBe(201);
    connection = json(created);
  }, 60_000);
  afterAll(() => t.close());

  const path = (url: string) => new URL(url).pathname;
  const sp = () => ({ spEntityId: connection.spEntityId, acsUrl: connection.acsUrl });

  async function begin(email: string) {
    const started = await ssoStart(t, t.project.development, { email });
    expect(started.statusCode, started.body).toBe(200);
    const url: string = json(started).url;
    expect(url.startsWith(idp.ssoUrl)).toBe(true);
    return readRedirectRequest(url);
  }

  it('creation answers the SP URLs on the base URL and never a secret; SP metadata is served', async () => {
    expect(connection).toMatchObject({
      type: 'saml',
      name: 'Corp',
      domains: ['corp.test'],
      acsUrl: `http://gatehouse.test/v1/sso/saml/${connection.id}/acs`,
      spEntityId: `http://gatehouse.test/v1/sso/saml/${connection.id}/metadata`,
    });
    const metadata = await t.call({ method: 'GET', url: path(connection.spMetadataUrl) });
    expect(metadata.statusCode).toBe(200);
    expect(metadata.body).toContain(`Location="${connection.acsUrl}"`);
    expect(metadata.body).toContain('WantAssertionsSigned="true"');
  });

  it('GET /v1/environment lists the connection (id, name, type, domains)', async () => {
    const env = await t.call({ method: 'GET', url: '/v1/environment', credential: t.project.development.publishableKey });
    expect(json(env).ssoConnections).toEqual([{ id: connection.id, name: 'Corp', type: 'saml', domains: ['corp.test'], provider: 'saml' }]);
  });

  it('signs a new user up, and the second sign-in is the same user', async () => {
    const email = `${uniqueEmail('saml')}`.replace(/@.*/, '@corp.test');
    const first = await begin(email);
    const response = await idp.issue(sp(), { inResponseTo: first.id, nameId: email });
    const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: first.relayState! }));
    expect(back.error).toBeNull();
    expect(back.url.origin + back.url.pathname).toBe(REDIRECT_URL);
    const signedIn = await ssoVerify(t, t.project.development, back.token!);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const { user, session } = json(signedIn);
    expect(user.email).toBe(email);
    expect(session.accessToken).toBeTruthy();
    // The token is single-use.
    expect((await ssoVerify(t, t.project.development, back.token!)).statusCode).toBe(401);

    const second = await begin(email);
    const again = landing(
      await postAcs(t, path(connection.acsUrl), { SAMLResponse: await idp.issue(sp(), { inResponseTo: second.id, nameId: email }), RelayState: second.relayState! }),
    );
    expect(json(await ssoVerify(t, t.project.development, again.token!)).user.id).toBe(user.id);
  });

  it('reads the names from WS-Federation claim attributes (Entra ID, AD FS)', async () => {
    const email = uniqueEmail('names').replace(/@.*/, '@corp.test');
    const request = await begin(email);
    const claims = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email, attributes: { [`${claims}/givenname`]: 'Grace', [`${claims}/surname`]: 'Hopper' } });
    const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    const { user } = json(await ssoVerify(t, t.project.development, back.token!));
    expect(json(await t.call({ method: 'GET', url: `/v1/users/${user.id}`, credential: t.project.development.secretKey }))).toMatchObject({ firstName: 'Grace', lastName: 'Hopper' });
  });

  it('links an existing password user at a listed domain', async () => {
    const email = uniqueEmail('existing').replace(/@.*/, '@corp.test');
    const existing = await signUp(t, { email });
    const request = await begin(email);
    const back = landing(
      await postAcs(t, path(connection.acsUrl), { SAMLResponse: await idp.issue(sp(), { inResponseTo: request.id, nameId: email }), RelayState: request.relayState! }),
    );
    expect(back.error).toBeNull();
    expect(json(await ssoVerify(t, t.project.development, back.token!)).user.id).toBe(existing.userId);
  });

  it('an unknown email domain answers 422 sso_not_configured; a connection id starts directly', async () => {
    const none = await ssoStart(t, t.project.development, { email: 'someone@elsewhere.test' });
    expect(none.statusCode).toBe(422);
    expect(json(none).error.code).toBe('sso_not_configured');
    const direct = await ssoStart(t, t.project.development, { connectionId: connection.id });
    expect(direct.statusCode).toBe(200);
  });

  it('a redirectUrl outside the origin lock is refused', async () => {
    const response = await ssoStart(t, t.project.development, { email: 'a@corp.test', redirectUrl: 'https://example.test.evil.test/x' });
    expect(response.statusCode).toBe(400);
    expect(json(response).error.details.fields).toEqual(['redirectUrl']);
  });

  it('bad metadata, a bad certificate or a missing field is a clear 400', async () => {
    const bad = await createConnection(t, t.project.development, { type: 'saml', name: 'X', domains: ['x.test'], idpMetadataXml: '<not-xml' });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.details.fields).toEqual(['idpMetadataXml']);
    const cert = await createConnection(t, t.project.development, {
      type: 'saml',
      name: 'X',
      domains: ['x.test'],
      idpEntityId: 'https://idp.x.test',
      idpSsoUrl: 'https://idp.x.test/sso',
      idpCertificate: 'bm90IGEgY2VydA==',
    });
    expect(cert.statusCode).toBe(400);
    expect(json(cert).error.details.fields).toEqual(['idpCertificate']);
    const taken = await createConnection(t, t.project.development, { type: 'saml', name: 'Y', domains: ['corp.test'], idpMetadataXml: idp.metadataXml });
    expect(taken.statusCode).toBe(409);
  });

  it('PATCH changes the name and domains; DELETE removes it', async () => {
    const created = json(await createConnection(t, t.project.development, { type: 'saml', name: 'Temp', domains: ['temp.test'], idpMetadataXml: idp.metadataXml }));
    const base = `/v1/platform/environments/${t.project.development.id}/sso-connections/${created.id}`;
    const patched = await t.call({ method: 'PATCH', url: base, credential: t.platformKey, payload: { name: 'Temp 2', domains: ['temp2.test'] } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(json(patched)).toMatchObject({ name: 'Temp 2', domains: ['temp2.test'], idpEntityId: idp.entityId });
    expect((await t.call({ method: 'DELETE', url: base, credential: t.platformKey })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: base, credential: t.platformKey })).statusCode).toBe(404);
  });

  it('sign-up rules apply: verification required does not hold up an address the IdP proved; signUp off refuses a new person but signs a known one in', async () => {
    const project = await t.createProject('Rules');
    await enableSso(t, project.development);
    await t.setSettings(project.development.id, { emailVerification: 'required' });
    const rules = json(await createConnection(t, project.development, { type: 'saml', name: 'Rules', domains: ['rules.test'], idpMetadataXml: idp.metadataXml }));
    const signInAs = async (email: string) => {
      const started = await ssoStart(t, project.development, { email });
      const request = readRedirectRequest(json(started).url);
      const response = await idp.issue({ spEntityId: rules.spEntityId, acsUrl: rules.acsUrl }, { inResponseTo: request.id, nameId: email });
      return landing(await postAcs(t, path(rules.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    };
    const known = uniqueEmail('rules-known').replace(/@.*/, '@rules.test');
    const first = await signInAs(known);
    expect(first.error).toBeNull();
    const { user } = json(await ssoVerify(t, project.development, first.token!));
    expect(json(await t.call({ method: 'GET', url: `/v1/users/${user.id}`, credential: project.development.secretKey })).emailVerified).toBe(true);

    await t.setSettings(project.development.id, { signUp: false });
    const stranger = await signInAs(uniqueEmail('rules-new').replace(/@.*/, '@rules.test'));
    expect(stranger.token).toBeNull();
    expect(stranger.error).toBe('method_disabled');
    const again = await signInAs(known);
    expect(json(await ssoVerify(t, project.development, again.token!)).user.id).toBe(user.id);
  });

  it('with authMethods.sso off, start and verify answer 403 method_disabled (connections stay manageable)', async () => {
    const project = await t.createProject('Off');
    const created = await createConnection(t, project.development, { type: 'saml', name: 'Corp', domains: ['corp.test'], idpMetadataXml: idp.metadataXml });
    expect(created.statusCode).toBe(201);
    const start = await ssoStart(t, project.development, { email: 'a@corp.test' });
    expect(start.statusCode).toBe(403);
    expect(json(start).error.code).toBe('method_disabled');
    const verify = await ssoVerify(t, project.development, 'whatever');
    expect(json(verify).error.code).toBe('method_disabled');
    const env = await t.call({ method: 'GET', url: '/v1/environment', credential: project.development.publishableKey });
    expect(json(env).ssoConnections).toEqual([]);
  });
  describe('certificate rollover and IdP-initiated RelayState', () => {
    const keyDescriptor = (metadata: string) => /<KeyDescriptor[\s\S]*?<\/KeyDescriptor>/.exec(metadata)![0];

    it('certificate rollover: metadata with the old and the new signing certificate accepts assertions signed with either', async () => {
      const project = await t.createProject('Rollover');
      await enableSso(t, project.development);
      const old = await startTestIdp({ ssoUrl: 'https://idp.roll.test/sso' });
      const next = await startTestIdp({ ssoUrl: 'https://idp.roll.test/sso', material: await makeSigningMaterial('Test IdP 2027') });
      const both = old.metadataXml.replace('</KeyDescriptor>', `</KeyDescriptor>${keyDescriptor(next.metadataXml)}`);
      const created = await createConnection(t, project.development, { type: 'saml', name: 'Roll', domains: ['roll.test'], idpMetadataXml: both });
      expect(created.statusCode, created.body).toBe(201);
      const roll = json(created);
      const target = { spEntityId: roll.spEntityId, acsUrl: roll.acsUrl };
      for (const signer of [old, next]) {
        const email = uniqueEmail('roll').replace(/@.*/, '@roll.test');
        const request = readRedirectRequest(json(await ssoStart(t, project.development, { email })).url);
        const response = await signer.issue(target, { inResponseTo: request.id, nameId: email });
        const back = landing(await postAcs(t, path(roll.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
        expect(back.error, back.url.searchParams.get('error_description') ?? '').toBeNull();
        expect(json(await ssoVerify(t, project.development, back.token!)).user.email).toBe(email);
      }
      // A PATCH that leaves the certificate alone keeps both; a third key is still refused.
      expect((await t.call({ method: 'PATCH', url: `/v1/platform/environments/${project.development.id}/sso-connections/${roll.id}`, credential: t.platformKey, payload: { name: 'Roll 2' } })).statusCode).toBe(200);
      const email = uniqueEmail('roll-after').replace(/@.*/, '@roll.test');
      const request = readRedirectRequest(json(await ssoStart(t, project.development, { email })).url);
      const signed = await next.issue(target, { inResponseTo: request.id, nameId: email });
      expect(landing(await postAcs(t, path(roll.acsUrl), { SAMLResponse: signed, RelayState: request.relayState! })).token).toBeTruthy();
      const stranger = await startTestIdp({ ssoUrl: 'https://idp.roll.test/sso', material: await makeSigningMaterial('Stranger') });
      const other = readRedirectRequest(json(await ssoStart(t, project.development, { email })).url);
      const forged = await stranger.issue(target, { inResponseTo: other.id, nameId: email });
      expect(landing(await postAcs(t, path(roll.acsUrl), { SAMLResponse: forged, RelayState: other.relayState! })).error).toBe('invalid_response');
    });

    it("an IdP-initiated sign-in carrying the IdP's own RelayState is accepted where the connection allows IdP-initiated sign-in", async () => {
      const project = await t.createProject('Portal RelayState');
      await enableSso(t, project.development);
      const portal = json(
        await createConnection(t, project.development, {
          type: 'saml',
          name: 'Portal',
          domains: ['okta-portal.test'],
          idpMetadataXml: idp.metadataXml,
          allowIdpInitiated: true,
          idpInitiatedRedirectUrl: 'https://app.example.test/portal',
        }),
      );
      const target = { spEntityId: portal.spEntityId, acsUrl: portal.acsUrl };
      const email = uniqueEmail('relay').replace(/@.*/, '@okta-portal.test');
      const response = await idp.issue(target, { nameId: email });
      const back = landing(await postAcs(t, path(portal.acsUrl), { SAMLResponse: response, RelayState: 'https://app.example.test/dashboard' }));
      expect(back.url.pathname).toBe('/portal');
      expect(json(await ssoVerify(t, project.development, back.token!)).user.email).toBe(email);
      // Still once only, RelayState or not.
      expect(landing(await postAcs(t, path(portal.acsUrl), { SAMLResponse: response, RelayState: 'other' })).error).toBe('replayed');
      // A connection that does not allow IdP-initiated sign-in still refuses an unknown RelayState.
      const unsolicited = await idp.issue(sp(), { nameId: uniqueEmail('relay-no').replace(/@.*/, '@corp.test') });
      const refused = await postAcs(t, path(connection.acsUrl), { SAMLResponse: unsolicited, RelayState: 'https://app.example.test/dashboard' });
      expect(refused.statusCode).toBe(400);
    });
  });
});
