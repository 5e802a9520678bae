import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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

  it('account enumeration: an existing user whose domain the connection does not list gets the answer a stranger gets (error=email_not_verified)', async () => {
    const email = uniqueEmail('outsider').replace(/@.*/, '@partner.test');
    await signUp(t, { email });
    const request = await begin('x@corp.test');
    const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email });
    const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    expect(back.token).toBeNull();
    expect(back.error).toBe('email_not_verified');
    const stranger = await begin('z@corp.test');
    const other = await idp.issue(sp(), { inResponseTo: stranger.id, nameId: uniqueEmail('stranger').replace(/@.*/, '@partner.test') });
    const fresh = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: other, RelayState: stranger.relayState! }));
    expect(fresh.url.searchParams.get('error_description')).toBe(back.url.searchParams.get('error_description'));
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

  describe('XML signature wrapping (XSW) permutations, posted to the ACS', () => {
    const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
    const SAMLP_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
    const DS_NS = 'http://www.w3.org/2000/09/xmldsig#';

    /** The attacker holds a response signed for them and rearranges it. */
    function tamper(samlResponse: string, change: (doc: Document, response: Element, assertion: Element) => void): string {
      const doc = new DOMParser().parseFromString(decodeResponse(samlResponse), 'text/xml') as unknown as Document;
      change(doc, doc.documentElement, doc.getElementsByTagNameNS(SAML_NS, 'Assertion')[0]!);
      return encodeResponse(new XMLSerializer().serializeToString(doc as never));
    }
    /** A copy of the signed assertion naming the victim, without a valid signature of its own. */
    function evilCopy(assertion: Element, victim: string, keepSignature = false): Element {
      const evil = assertion.cloneNode(true) as Element;
      evil.getElementsByTagNameNS(SAML_NS, 'NameID')[0]!.textContent = victim;
      const signature = evil.getElementsByTagNameNS(DS_NS, 'Signature')[0];
      if (signature && !keepSignature) evil.removeChild(signature);
      return evil;
    }

    const permutations: [string, (doc: Document, response: Element, assertion: Element, victim: string) => void, boolean?][] = [
      ['an unsigned evil assertion after the signed one', (_d, response, assertion, victim) => {
        const evil = evilCopy(assertion, victim);
        evil.setAttribute('ID', '_evil');
        response.appendChild(evil);
      }],
      ['an unsigned evil assertion before the signed one', (_d, response, assertion, victim) => {
        const evil = evilCopy(assertion, victim);
        evil.setAttribute('ID', '_evil');
        response.insertBefore(evil, assertion);
      }],
      ['the signed assertion wrapped inside an evil one', (_d, response, assertion, victim) => {
        const evil = evilCopy(assertion, victim);
        evil.setAttribute('ID', '_evil');
        response.replaceChild(evil, assertion);
        evil.appendChild(assertion);
      }],
      ['the signed assertion hidden in samlp:Extensions behind an evil one with its ID', (doc, response, assertion, victim) => {
        const evil = evilCopy(assertion, victim);
        const extensions = doc.createElementNS(SAMLP_NS, 'samlp:Extensions');
        response.replaceChild(evil, assertion);
        extensions.appendChild(assertion);
        response.insertBefore(extensions, evil);
      }],
      ["an evil assertion carrying the original's signature, the original in ds:Object", (doc, response, assertion, victim) => {
        const evil = evilCopy(assertion, victim, true);
        const object = doc.createElementNS(DS_NS, 'ds:Object');
        evil.getElementsByTagNameNS(DS_NS, 'Signature')[0]!.appendChild(object);
        response.replaceChild(evil, assertion);
        object.appendChild(assertion);
      }],
      ['a signed Response whose unsigned assertion is swapped for an evil one', (_d, response, assertion, victim) => {
        response.replaceChild(evilCopy(assertion, victim), assertion);
      }, true],
    ];

    it.each(permutations)('XSW: %s is refused and signs nobody in', async (_name, change, signMessageOnly) => {
      const attacker = corpEmail('xsw-attacker');
      const victim = corpEmail('xsw-victim');
      const victimId = (await signUp(t, { email: victim })).userId;
      const request = await begin(attacker);
      const signed = await idp.issue(sp(), { inResponseTo: request.id, nameId: attacker, ...(signMessageOnly ? { signMessageOnly: true } : {}) });
      const wrapped = tamper(signed, (doc, response, assertion) => change(doc, response, assertion, victim));
      const back = landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: wrapped, RelayState: request.relayState! }));
      expect(back.token).toBeNull();
      expect(back.error).toBe('invalid_response');
      expect(victimId).toBeTruthy();
    });
  });

  describe('clock skew (5 s) and replay at the edges, on a frozen clock', () => {
    afterEach(() => void vi.useRealTimers());
    const freeze = () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now());
    };
    const postFor = async (email: string, times: Parameters<TestIdp['issue']>[1]) => {
      const request = await begin(email);
      const response = await idp.issue(sp(), { inResponseTo: request.id, nameId: email, ...times });
      return landing(await postAcs(t, path(connection.acsUrl), { SAMLResponse: response, RelayState: request.relayState! }));
    };

    it('skew at the edge: lapsed 4 s ago is accepted, 6 s ago refused; NotBefore 4 s ahead accepted, 6 s ahead refused', async () => {
      freeze();
      expect((await postFor(corpEmail('lapsed-4'), { conditionsNotOnOrAfter: -4_000, confirmationNotOnOrAfter: -4_000 })).token).toBeTruthy();
      expect((await postFor(corpEmail('lapsed-6'), { conditionsNotOnOrAfter: -6_000, confirmationNotOnOrAfter: -6_000 })).error).toBe('invalid_response');
      expect((await postFor(corpEmail('ahead-4'), { conditionsNotBefore: 4_000 })).token).toBeTruthy();
      expect((await postFor(corpEmail('ahead-6'), { conditionsNotBefore: 6_000 })).error).toBe('invalid_response');
    });

    it('replay inside the skew grace: an IdP-initiated assertion that lapsed 2 s ago is refused the second time, even after the ledger was swept', async () => {
      const grace = json(
        await createConnection(t, t.project.development, {
          type: 'saml',
          name: 'Grace',
          domains: ['grace.test'],
          idpMetadataXml: idp.metadataXml,
          allowIdpInitiated: true,
          idpInitiatedRedirectUrl: 'https://app.example.test/portal',
        }),
      );
      const acs = path(grace.acsUrl);
      freeze();
      const lapsing = await idp.issue(sp(grace), { nameId: uniqueEmail('grace').replace(/@.*/, '@grace.test'), conditionsNotOnOrAfter: -2_000, confirmationNotOnOrAfter: -2_000 });
      expect(landing(await postAcs(t, acs, { SAMLResponse: lapsing })).token).toBeTruthy();
      // Another sign-in remembers its assertion and forgets the lapsed ones.
      expect(landing(await postAcs(t, acs, { SAMLResponse: await idp.issue(sp(grace), { nameId: uniqueEmail('grace2').replace(/@.*/, '@grace.test') }) })).token).toBeTruthy();
      const replay = landing(await postAcs(t, acs, { SAMLResponse: lapsing }));
      expect(replay.token).toBeNull();
      expect(replay.error).toBe('replayed');
    });
  });

  it("start hijack: an unsolicited assertion posted with a pending start's RelayState does not complete that start", async () => {
    const portal = json(
      await createConnection(t, t.project.development, {
        type: 'saml',
        name: 'Hijack',
        domains: ['hijack.test'],
        idpMetadataXml: idp.metadataXml,
        allowIdpInitiated: true,
        idpInitiatedRedirectUrl: 'https://app.example.test/portal',
      }),
    );
    const request = readRedirectRequest(json(await ssoStart(t, t.project.development, { connectionId: portal.id })).url);
    const unsolicited = await idp.issue(sp(portal), { nameId: uniqueEmail('hijack').replace(/@.*/, '@hijack.test') });
    const back = landing(await postAcs(t, path(portal.acsUrl), { SAMLResponse: unsolicited, RelayState: request.relayState! }));
    expect(back.token).toBeNull();
    expect(back.error).toBe('request_mismatch');
  });

  it("IdP-initiated redirect after the origin lock changed: the token is not sent to an origin the environment no longer accepts", async () => {
    const moved = await t.createProject('Moved', 'example.test');
    await enableSso(t, moved.development);
    const portal = json(
      await createConnection(t, moved.development, {
        type: 'saml',
        name: 'Portal',
        domains: ['moved.test'],
        idpMetadataXml: idp.metadataXml,
        allowIdpInitiated: true,
        idpInitiatedRedirectUrl: 'https://app.example.test/portal',
      }),
    );
    await t.setSettings(moved.development.id, { domain: 'new-home.test' });
    const posted = await postAcs(t, path(portal.acsUrl), { SAMLResponse: await idp.issue(sp(portal), { nameId: uniqueEmail('moved').replace(/@.*/, '@moved.test') }) });
    expect(posted.headers.location).toBeUndefined();
    expect(posted.statusCode).toBe(400);
    expect(json(posted).error.code).toBe('invalid_request');
  });

  it('double submit: two first sign-ins of one subject racing to link the same account both land, neither is a 500', async () => {
    const email = corpEmail('race');
    const existing = await signUp(t, { email });
    const [a, b] = [await begin(email), await begin(email)];
    const [ra, rb] = [await idp.issue(sp(), { inResponseTo: a.id, nameId: email }), await idp.issue(sp(), { inResponseTo: b.id, nameId: email })];
    const answers = await Promise.all([
      postAcs(t, path(connection.acsUrl), { SAMLResponse: ra, RelayState: a.relayState! }),
      postAcs(t, path(connection.acsUrl), { SAMLResponse: rb, RelayState: b.relayState! }),
    ]);
    for (const answer of answers) {
      const back = landing(answer);
      expect(back.error, back.url.searchParams.get('error_description') ?? '').toBeNull();
      expect(json(await ssoVerify(t, t.project.development, back.token!)).user.id).toBe(existing.userId);
    }
  });

  it('garbage at the ACS is a 4xx or an error redirect, never a 500', async () => {
    const request = await begin(corpEmail('garbage'));
    const acs = path(connection.acsUrl);
    for (const SAMLResponse of ['not base64 at all!', Buffer.from('<samlp:Response').toString('base64'), Buffer.from([0xff, 0x00, 0x13, 0x37]).toString('base64')]) {
      const back = landing(await postAcs(t, acs, { SAMLResponse, RelayState: request.relayState! }));
      expect(back.token).toBeNull();
      expect(back.error).toBe('invalid_response');
    }
    const missing = await postAcs(t, acs, { RelayState: request.relayState! });
    expect(missing.statusCode).toBe(400);
    expect(json(missing).error.code).toBe('invalid_request');
    // A JSON body with objects where the form has strings.
    const objects = await t.call({ method: 'POST', url: acs, payload: { SAMLResponse: { $ne: 1 }, RelayState: [request.relayState] } });
    expect(objects.statusCode).toBe(400);
    expect(json(objects).error.code).toBe('invalid_request');
    const empty = await t.call({ method: 'POST', url: acs });
    expect(empty.statusCode).toBeGreaterThanOrEqual(400);
    expect(empty.statusCode).toBeLessThan(500);
    const unknown = await postAcs(t, '/v1/sso/saml/ssoc_unknown/acs', { SAMLResponse: 'x', RelayState: 'y' });
    expect(unknown.statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/v1/sso/saml/ssoc_unknown/metadata' })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `/v1/sso/oidc/${connection.id}/callback?state=x&code=y` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/v1/sso/oidc/ssoc_unknown/callback' })).statusCode).toBe(404);
  });
});
