/**
 * Attacks on the SAML ACS, each named for the attack, against responses signed by a real IdP
 * (samlify in-process) and then tampered with as an attacker holding them would.
 */
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import { acceptSamlResponse, MemorySamlLedger, SamlResponseError, verifySamlResponse } from '../../src/sso/saml/index.js';
import { decodeResponse, encodeResponse, makeSigningMaterial, startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { SP, connectionFor, pendingRequest } from '../helpers/saml-sp.js';

const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const DS = 'http://www.w3.org/2000/09/xmldsig#';

let idp: TestIdp;
beforeAll(async () => {
  idp = await startTestIdp();
});

async function failure(promise: Promise<unknown>): Promise<SamlResponseError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the response was accepted').toBeInstanceOf(SamlResponseError);
  return error as SamlResponseError;
}

/** Parses a posted response, lets the attacker rearrange it, and posts it again. */
function tamper(samlResponse: string, change: (doc: Document, response: Element, assertion: Element) => void): string {
  const doc = new DOMParser().parseFromString(decodeResponse(samlResponse), 'text/xml') as unknown as Document;
  const response = doc.documentElement;
  const assertion = doc.getElementsByTagNameNS(SAML, 'Assertion')[0]!;
  change(doc, response, assertion);
  return encodeResponse(new XMLSerializer().serializeToString(doc as never));
}

/** A copy of the signed assertion claiming another user, without a valid signature of its own. */
function evilCopy(assertion: Element, keepSignature = false): Element {
  const evil = assertion.cloneNode(true) as Element;
  evil.getElementsByTagNameNS(SAML, 'NameID')[0]!.textContent = 'ceo@corp.example';
  if (!keepSignature) {
    const signature = evil.getElementsByTagNameNS(DS, 'Signature')[0];
    if (signature) evil.removeChild(signature);
  }
  return evil;
}

const verify = (samlResponse: string) => verifySamlResponse(samlResponse, connectionFor(idp), SP);

describe('signature attacks', () => {
  it('NameID edited after signing is refused', async () => {
    const signed = await idp.issue(SP, { nameId: 'intern@corp.example' });
    const edited = encodeResponse(decodeResponse(signed).replace('intern@corp.example', 'ceo@corp.example'));
    expect((await failure(verify(edited))).reason).toBe('invalid_response');
  });

  it('an assertion signed by another key (same issuer name) is refused', async () => {
    const impostor = await startTestIdp({ entityId: idp.entityId, material: await makeSigningMaterial('Impostor') });
    expect((await failure(verify(await impostor.issue(SP)))).reason).toBe('invalid_response');
  });

  it('NameID comment injection does not truncate the subject (victim@corp<!---->.evil)', async () => {
    // The attacker owns victim@corp.example.evil.example at the IdP; a comment keeps the signature
    // valid (C14N drops comments) and makes a naive reader see only the text before it.
    const signed = await idp.issue(SP, { nameId: 'victim@corp.example.evil.example' });
    const injected = encodeResponse(decodeResponse(signed).replace('victim@corp.example.evil.example', 'victim@corp.example<!---->.evil.example'));
    const assertion = await verify(injected);
    expect(assertion.subject).toBe('victim@corp.example.evil.example');
    expect(assertion.email).toBe('victim@corp.example.evil.example');
  });
});

describe('XML signature wrapping (XSW) permutations', () => {
  it('a second, unsigned assertion after the signed one is refused', async () => {
    const wrapped = tamper(await idp.issue(SP), (doc, response, assertion) => {
      const evil = evilCopy(assertion);
      evil.setAttribute('ID', '_evil');
      response.appendChild(evil);
    });
    await expect(verify(wrapped)).rejects.toThrow(/exactly one assertion|multiple assertions/);
  });

  it('an unsigned evil assertion placed before the signed one is refused', async () => {
    const wrapped = tamper(await idp.issue(SP), (doc, response, assertion) => {
      const evil = evilCopy(assertion);
      evil.setAttribute('ID', '_evil');
      response.insertBefore(evil, assertion);
    });
    await expect(verify(wrapped)).rejects.toThrow(SamlResponseError);
  });

  it('the signed assertion wrapped inside an evil assertion is refused', async () => {
    const wrapped = tamper(await idp.issue(SP), (doc, response, assertion) => {
      const evil = evilCopy(assertion);
      evil.setAttribute('ID', '_evil');
      response.replaceChild(evil, assertion);
      evil.appendChild(assertion);
    });
    await expect(verify(wrapped)).rejects.toThrow(SamlResponseError);
  });

  it('the signed assertion hidden in samlp:Extensions behind an evil one with the same ID is refused', async () => {
    const wrapped = tamper(await idp.issue(SP), (doc, response, assertion) => {
      const evil = evilCopy(assertion);
      const extensions = doc.createElementNS(SAMLP, 'samlp:Extensions');
      response.replaceChild(evil, assertion);
      extensions.appendChild(assertion);
      response.insertBefore(extensions, evil);
    });
    await expect(verify(wrapped)).rejects.toThrow(SamlResponseError);
  });

  it("an evil assertion carrying the original's signature, with the original in ds:Object, is refused", async () => {
    const wrapped = tamper(await idp.issue(SP), (doc, response, assertion) => {
      const evil = evilCopy(assertion, true);
      const signature = evil.getElementsByTagNameNS(DS, 'Signature')[0]!;
      const object = doc.createElementNS(DS, 'ds:Object');
      signature.appendChild(object);
      response.replaceChild(evil, assertion);
      object.appendChild(assertion);
    });
    await expect(verify(wrapped)).rejects.toThrow(SamlResponseError);
  });

  it('a signed Response around an unsigned assertion is refused (signed assertions are required)', async () => {
    const responseSigned = await idp.issue(SP, { signMessageOnly: true });
    await expect(verify(responseSigned)).rejects.toThrow(/not signed/);
  });

  it('a signed Response with its unsigned assertion swapped for an evil one is refused', async () => {
    const wrapped = tamper(await idp.issue(SP, { signMessageOnly: true }), (doc, response, assertion) => {
      response.replaceChild(evilCopy(assertion), assertion);
    });
    await expect(verify(wrapped)).rejects.toThrow(SamlResponseError);
  });
});

describe('replay and unsolicited responses', () => {
  it('a replayed response is refused the second time', async () => {
    const ledger = new MemorySamlLedger();
    const requestId = pendingRequest(ledger);
    const samlResponse = await idp.issue(SP, { inResponseTo: requestId });
    const input = { samlResponse, idp: connectionFor(idp), sp: SP, allowIdpInitiated: false, expectedRequestId: requestId, ledger };
    await expect(acceptSamlResponse(input)).resolves.toMatchObject({ inResponseTo: requestId });
    expect((await failure(acceptSamlResponse(input))).reason).toBe('replayed');
  });

  it('a response to a request that was never made (or expired) is refused', async () => {
    const ledger = new MemorySamlLedger();
    const samlResponse = await idp.issue(SP, { inResponseTo: '_never_sent' });
    const input = { samlResponse, idp: connectionFor(idp), sp: SP, allowIdpInitiated: false, expectedRequestId: '_never_sent', ledger };
    expect((await failure(acceptSamlResponse(input))).reason).toBe('replayed');
  });

  it('an unsolicited (IdP-initiated) response is refused unless the connection enables it', async () => {
    const ledger = new MemorySamlLedger();
    const samlResponse = await idp.issue(SP);
    const input = { samlResponse, idp: connectionFor(idp), sp: SP, allowIdpInitiated: false, expectedRequestId: null, ledger };
    expect((await failure(acceptSamlResponse(input))).reason).toBe('unsolicited');
  });

  it('an enabled IdP-initiated response is accepted once; its replay is refused', async () => {
    const ledger = new MemorySamlLedger();
    const samlResponse = await idp.issue(SP);
    const input = { samlResponse, idp: connectionFor(idp), sp: SP, allowIdpInitiated: true, expectedRequestId: null, ledger };
    await expect(acceptSamlResponse(input)).resolves.toMatchObject({ inResponseTo: null });
    expect((await failure(acceptSamlResponse(input))).reason).toBe('replayed');
  });

  it("an unsigned InResponseTo added to the envelope does not make an unsolicited assertion solicited", async () => {
    const ledger = new MemorySamlLedger();
    const requestId = pendingRequest(ledger);
    const forged = tamper(await idp.issue(SP), (doc, response) => response.setAttribute('InResponseTo', requestId));
    const input = { samlResponse: forged, idp: connectionFor(idp), sp: SP, allowIdpInitiated: false, expectedRequestId: requestId, ledger };
    expect((await failure(acceptSamlResponse(input))).reason).toBe('unsolicited');
    expect(await ledger.consumeRequest(requestId)).toBe(true); // the victim's pending request is untouched
  });

  it("login swapping: a response to another browser's request is refused with this browser's RelayState", async () => {
    const ledger = new MemorySamlLedger();
    const attackersRequest = pendingRequest(ledger);
    const victimsRequest = pendingRequest(ledger);
    const samlResponse = await idp.issue(SP, { inResponseTo: attackersRequest });
    const input = { samlResponse, idp: connectionFor(idp), sp: SP, allowIdpInitiated: false, expectedRequestId: victimsRequest, ledger };
    expect((await failure(acceptSamlResponse(input))).reason).toBe('request_mismatch');
  });

  it('a response whose envelope and assertion name different requests is refused', async () => {
    const ledger = new MemorySamlLedger();
    const requestId = pendingRequest(ledger);
    const other = pendingRequest(ledger);
    const forged = tamper(await idp.issue(SP, { inResponseTo: requestId }), (doc, response) => response.setAttribute('InResponseTo', other));
    await expect(verify(forged)).rejects.toThrow(/different requests/);
  });
});

describe('XML attacks', () => {
  it('a DOCTYPE with an external entity (XXE) is refused before any parsing of entities', async () => {
    const signed = decodeResponse(await idp.issue(SP));
    const xxe = encodeResponse(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${signed}`);
    await expect(verify(xxe)).rejects.toThrow(/DOCTYPE/);
  });
});
