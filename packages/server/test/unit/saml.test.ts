/**
 * The SAML core against a real IdP in-process (samlify, signing with a certificate made by the
 * test): requests out, metadata both ways, responses in, and the clock-skew edges. Attacks are in
 * saml.security.test.ts.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  acceptSamlResponse,
  buildAuthnRequestUrl,
  buildSpMetadata,
  MemorySamlLedger,
  MetadataError,
  normalizeCertificate,
  parseIdpMetadata,
  SamlResponseError,
  verifySamlResponse,
} from '../../src/sso/saml/index.js';
import { NAMEID_PERSISTENT, readRedirectRequest, startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { SP, connectionFor, pendingRequest } from '../helpers/saml-sp.js';

let idp: TestIdp;
beforeAll(async () => {
  idp = await startTestIdp();
});
afterEach(() => {
  vi.useRealTimers();
});

async function reason(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SamlResponseError);
  return (error as SamlResponseError).reason;
}

describe('IdP metadata', () => {
  it('reads entity id, HTTP-Redirect SSO URL and signing certificate', () => {
    const settings = parseIdpMetadata(idp.metadataXml);
    expect(settings.idpEntityId).toBe(idp.entityId);
    expect(settings.idpSsoUrl).toBe(idp.ssoUrl);
    expect(settings.idpCertificate).toBe(normalizeCertificate(idp.certificatePem));
  });

  it('refuses XML that does not parse, with a message naming the field', () => {
    expect(() => parseIdpMetadata('<EntityDescriptor entityID="x"><IDPSSODescriptor>')).toThrow(MetadataError);
    expect(() => parseIdpMetadata('not xml at all')).toThrow(/idpMetadataXml is not well-formed XML/);
  });

  it('refuses metadata that is not an IdP, or lacks the redirect binding or a certificate', () => {
    expect(() => parseIdpMetadata('<foo/>')).toThrow(/root must be an md:EntityDescriptor/);
    const noRedirect = idp.metadataXml.replace(/<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"[^>]*><\/SingleSignOnService>/, '');
    expect(() => parseIdpMetadata(noRedirect)).toThrow(/HTTP-Redirect/);
    const noCert = idp.metadataXml.replace(/<KeyDescriptor[\s\S]*<\/KeyDescriptor>/, '');
    expect(() => parseIdpMetadata(noCert)).toThrow(/no signing certificate/);
  });

  it('refuses a DOCTYPE (entities are how XXE and billion laughs arrive)', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idp.metadataXml}`;
    expect(() => parseIdpMetadata(xxe)).toThrow(/DOCTYPE/);
  });
});

describe('idpCertificate', () => {
  it('accepts PEM and bare base64 DER as the same certificate', () => {
    const body = idp.certificatePem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    expect(normalizeCertificate(body)).toBe(normalizeCertificate(idp.certificatePem));
  });

  it('refuses what is not a certificate', () => {
    expect(() => normalizeCertificate('hello')).toThrow(/does not decode to an X.509 certificate/);
    expect(() => normalizeCertificate('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----')).toThrow(/not a key/);
    expect(() => normalizeCertificate('')).toThrow(/PEM certificate or its base64 DER body/);
  });
});

describe('SP metadata', () => {
  it('names the entity id and the ACS URL with the POST binding, and asks for signed assertions', () => {
    const xml = buildSpMetadata(SP);
    const doc = parseIdpMetadataLike(xml);
    expect(doc).toContain(`entityID="${SP.spEntityId}"`);
    expect(doc).toContain(`Location="${SP.acsUrl}"`);
    expect(doc).toContain('WantAssertionsSigned="true"');
    expect(doc).toContain('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
  });
});

function parseIdpMetadataLike(xml: string): string {
  // SP metadata must parse as well-formed XML too.
  expect(() => parseIdpMetadata(xml)).toThrow(/no identity provider/);
  return xml;
}

describe('AuthnRequest (HTTP-Redirect)', () => {
  it('goes to the IdP SSO URL with the request, its id and the opaque RelayState', async () => {
    const url = await buildAuthnRequestUrl({ idp: connectionFor(idp), sp: SP, requestId: '_req123', relayState: 'opaque-relay' });
    expect(url.startsWith(`${idp.ssoUrl}?`)).toBe(true);
    const request = readRedirectRequest(url);
    expect(request.id).toBe('_req123');
    expect(request.relayState).toBe('opaque-relay');
    expect(request.xml).toContain(`AssertionConsumerServiceURL="${SP.acsUrl}"`);
    expect(request.xml).toContain(`>${SP.spEntityId}</saml:Issuer>`);
    expect(request.xml).toContain(`Destination="${idp.ssoUrl}"`);
  });
});

describe('responses', () => {
  it('accepts a signed response to a pending request and reads the email from an emailAddress NameID', async () => {
    const ledger = new MemorySamlLedger();
    const requestId = pendingRequest(ledger);
    const samlResponse = await idp.issue(SP, { inResponseTo: requestId, nameId: 'Ada@Corp.example' });
    const assertion = await acceptSamlResponse({ samlResponse, idp: connectionFor(idp), sp: SP, allowIdpInitiated: false, expectedRequestId: requestId, ledger });
    expect(assertion).toMatchObject({ subject: 'Ada@Corp.example', email: 'Ada@Corp.example', inResponseTo: requestId, issuer: idp.entityId });
  });

  it('reads the email from the email attribute when the NameID is not an email', async () => {
    const samlResponse = await idp.issue(SP, { nameId: 'u-123', nameIdFormat: NAMEID_PERSISTENT, attributes: { email: 'grace@corp.example' } });
    const assertion = await verifySamlResponse(samlResponse, connectionFor(idp), SP);
    expect(assertion).toMatchObject({ subject: 'u-123', email: 'grace@corp.example', inResponseTo: null });
  });

  it('reads the email from the WS-Federation claim name (Entra ID, AD FS)', async () => {
    const claim = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress';
    const samlResponse = await idp.issue(SP, { nameId: 'u-9', nameIdFormat: NAMEID_PERSISTENT, attributes: { [claim]: 'linus@corp.example' } });
    expect((await verifySamlResponse(samlResponse, connectionFor(idp), SP)).email).toBe('linus@corp.example');
  });

  it('has no email when a persistent NameID comes without an email attribute', async () => {
    const samlResponse = await idp.issue(SP, { nameId: 'u-1', nameIdFormat: NAMEID_PERSISTENT });
    expect((await verifySamlResponse(samlResponse, connectionFor(idp), SP)).email).toBeNull();
  });

  it('refuses an expired assertion', async () => {
    const samlResponse = await idp.issue(SP, { conditionsNotBefore: -600_000, conditionsNotOnOrAfter: -60_000, confirmationNotOnOrAfter: -60_000 });
    expect(await reason(verifySamlResponse(samlResponse, connectionFor(idp), SP))).toBe('invalid_response');
  });

  it('refuses an assertion for another audience', async () => {
    const samlResponse = await idp.issue(SP, { audience: 'https://other-sp.example/metadata' });
    await expect(verifySamlResponse(samlResponse, connectionFor(idp), SP)).rejects.toThrow(/audience/i);
  });

  it('refuses an assertion for another recipient, and a response for another destination', async () => {
    const wrongRecipient = await idp.issue(SP, { recipient: 'https://other-sp.example/acs' });
    await expect(verifySamlResponse(wrongRecipient, connectionFor(idp), SP)).rejects.toThrow(/Recipient/);
    const wrongDestination = await idp.issue(SP, { destination: 'https://other-sp.example/acs' });
    await expect(verifySamlResponse(wrongDestination, connectionFor(idp), SP)).rejects.toThrow(/addressed to/);
  });

  it("refuses an assertion whose issuer is not the connection's IdP", async () => {
    const samlResponse = await idp.issue(SP, { issuer: 'https://someone-else.example/idp' });
    expect(await reason(verifySamlResponse(samlResponse, connectionFor(idp), SP))).toBe('invalid_response');
  });

  it('refuses a SAMLResponse that is not base64 or not XML', async () => {
    await expect(verifySamlResponse('%%%', connectionFor(idp), SP)).rejects.toThrow(/not base64/);
    await expect(verifySamlResponse(Buffer.from('<a><b></a>').toString('base64'), connectionFor(idp), SP)).rejects.toThrow(/not well-formed/);
  });
});

describe('clock skew of 5 s, at the edges', () => {
  const at = (ms: number) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(ms);
  };

  it('accepts an assertion that expired 4 s ago and refuses one that expired 6 s ago', async () => {
    const now = Date.parse('2026-06-01T12:00:00.000Z');
    at(now);
    const fourSeconds = await idp.issue(SP, { conditionsNotBefore: -60_000, conditionsNotOnOrAfter: -4_000, confirmationNotOnOrAfter: -4_000 });
    const sixSeconds = await idp.issue(SP, { conditionsNotBefore: -60_000, conditionsNotOnOrAfter: -6_000, confirmationNotOnOrAfter: -6_000 });
    await expect(verifySamlResponse(fourSeconds, connectionFor(idp), SP)).resolves.toMatchObject({ subject: 'ada@corp.example' });
    await expect(verifySamlResponse(sixSeconds, connectionFor(idp), SP)).rejects.toThrow(SamlResponseError);
  });

  it('applies the skew to Conditions alone (the library check) and to the bearer confirmation alone', async () => {
    at(Date.parse('2026-06-01T12:00:00.000Z'));
    const conditionsLate = await idp.issue(SP, { conditionsNotOnOrAfter: -6_000 });
    const confirmationLate = await idp.issue(SP, { confirmationNotOnOrAfter: -6_000 });
    const conditionsEdge = await idp.issue(SP, { conditionsNotOnOrAfter: -4_000 });
    const confirmationEdge = await idp.issue(SP, { confirmationNotOnOrAfter: -4_000 });
    await expect(verifySamlResponse(conditionsLate, connectionFor(idp), SP)).rejects.toThrow(SamlResponseError);
    await expect(verifySamlResponse(confirmationLate, connectionFor(idp), SP)).rejects.toThrow(/bearer confirmation has expired/);
    await expect(verifySamlResponse(conditionsEdge, connectionFor(idp), SP)).resolves.toBeTruthy();
    await expect(verifySamlResponse(confirmationEdge, connectionFor(idp), SP)).resolves.toBeTruthy();
  });

  it('accepts NotBefore 4 s in the future (an IdP clock ahead) and refuses 6 s', async () => {
    at(Date.parse('2026-06-01T12:00:00.000Z'));
    const ahead4 = await idp.issue(SP, { conditionsNotBefore: 4_000 });
    const ahead6 = await idp.issue(SP, { conditionsNotBefore: 6_000 });
    await expect(verifySamlResponse(ahead4, connectionFor(idp), SP)).resolves.toBeTruthy();
    await expect(verifySamlResponse(ahead6, connectionFor(idp), SP)).rejects.toThrow(SamlResponseError);
  });
});
