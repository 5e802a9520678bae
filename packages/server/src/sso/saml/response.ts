/**
 * Validation of a SAMLResponse posted to the ACS. @node-saml/node-saml (over xml-crypto) checks the
 * signature and hands back only the bytes the signature covers; everything Gatehouse then reads
 * (issuer, subject, recipient, InResponseTo, times, audience, email) comes from those verified
 * bytes, never from the document as posted. The unsigned envelope is only ever used to refuse.
 * See docs/sso.md, "SAML", for the library choice and the attack each check stops.
 */
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import type { SpEndpoints } from './authn-request.js';
import type { IdpSettings } from './metadata.js';
import { NAMEID_EMAIL, signingCertificates } from './metadata.js';
import { NS, XmlParseError, child, children, is, parseXml, text } from './xml.js';

/** Allowed difference between the IdP's clock and ours, applied to every time window. */
export const SAML_CLOCK_SKEW_MS = 5_000;

const MAX_RESPONSE_BYTES = 256 * 1024;
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const EMAIL_ATTRIBUTES = ['email', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'];

/** Canonicalisation and transforms a signature may use: comment-free c14n and enveloped only. */
const ALLOWED_TRANSFORMS = new Set([
  'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
  'http://www.w3.org/2001/10/xml-exc-c14n#',
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
]);
const ALLOWED_SIGNATURE_METHODS = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);
const ALLOWED_DIGESTS = new Set(['http://www.w3.org/2001/04/xmlenc#sha256', 'http://www.w3.org/2001/04/xmlenc#sha512']);

export type SamlFailure =
  | 'invalid_response' // malformed, unsigned, wrongly signed, wrong issuer/audience/recipient, expired
  | 'idp_error' // the IdP answered with a non-success status
  | 'unsolicited' // no InResponseTo, and the connection does not accept IdP-initiated sign-in
  | 'request_mismatch' // InResponseTo names another request than the one this browser started
  | 'replayed'; // the request was already answered, is unknown or expired, or the assertion was seen

export class SamlResponseError extends Error {
  override name = 'SamlResponseError';
  constructor(
    readonly reason: SamlFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedAssertion {
  assertionId: string;
  issuer: string;
  /** The NameID: with the connection, the identity's key. */
  subject: string;
  nameIdFormat: string | null;
  /** By the rule of DESIGN.md: NameID when its format is emailAddress, else an email attribute. */
  email: string | null;
  /** From the signed SubjectConfirmationData; null for an unsolicited (IdP-initiated) response. */
  inResponseTo: string | null;
  /** When the bearer confirmation lapses: how long a replay cache must remember the assertion. */
  notOnOrAfter: number;
  attributes: Record<string, string[]>;
}

const refuse = (message: string): never => {
  throw new SamlResponseError('invalid_response', message);
};

function parseInstant(value: string | null, what: string): number | null {
  if (value === null || value === '') return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) refuse(`${what} is not a valid time.`);
  return ms;
}

/** A [notBefore, notOnOrAfter) window, widened by the skew on both sides. */
function checkWindow(now: number, notBefore: number | null, notOnOrAfter: number | null, what: string): void {
  if (notBefore !== null && now + SAML_CLOCK_SKEW_MS < notBefore) refuse(`${what} is not yet valid.`);
  if (notOnOrAfter !== null && now - SAML_CLOCK_SKEW_MS >= notOnOrAfter) refuse(`${what} has expired.`);
}

function decode(samlResponse: string): string {
  const compact = samlResponse.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length > (MAX_RESPONSE_BYTES * 4) / 3 + 4 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    refuse('SAMLResponse is not base64.');
  }
  return Buffer.from(compact, 'base64').toString('utf8');
}

/** Refuses signatures whose algorithms let content change without the signature noticing. */
function checkSignatureAlgorithms(signature: Element): void {
  const signedInfo = child(signature, NS.dsig, 'SignedInfo') ?? refuse('The assertion signature has no SignedInfo.');
  const c14n = child(signedInfo, NS.dsig, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
  if (!ALLOWED_TRANSFORMS.has(c14n) || c14n.endsWith('enveloped-signature')) {
    refuse(`The assertion signature uses canonicalization ${c14n || '(none)'}; only comment-free C14N is accepted.`);
  }
  const method = child(signedInfo, NS.dsig, 'SignatureMethod')?.getAttribute('Algorithm') ?? '';
  if (!ALLOWED_SIGNATURE_METHODS.has(method)) {
    refuse(`The assertion is signed with ${method || '(none)'}; configure the IdP to sign with RSA-SHA256.`);
  }
  const references = children(signedInfo, NS.dsig, 'Reference');
  if (references.length !== 1) refuse('The assertion signature must have exactly one Reference.');
  const reference = references[0]!;
  const transforms = child(reference, NS.dsig, 'Transforms');
  for (const transform of transforms ? children(transforms, NS.dsig, 'Transform') : []) {
    const algorithm = transform.getAttribute('Algorithm') ?? '';
    if (!ALLOWED_TRANSFORMS.has(algorithm)) refuse(`The assertion signature uses the transform ${algorithm}, which is not accepted.`);
  }
  const digest = child(reference, NS.dsig, 'DigestMethod')?.getAttribute('Algorithm') ?? '';
  if (!ALLOWED_DIGESTS.has(digest)) refuse(`The assertion signature digests with ${digest || '(none)'}; SHA-256 is required.`);
}

/** Checks of the posted envelope. They can only refuse: nothing read here is trusted. */
function checkEnvelope(doc: Document, sp: SpEndpoints): { responseInResponseTo: string | null } {
  const response = doc.documentElement;
  if (!is(response, NS.protocol, 'Response')) refuse('The posted message is not a samlp:Response.');
  const statusCode = child(child(response, NS.protocol, 'Status') ?? response, NS.protocol, 'StatusCode');
  const status = statusCode?.getAttribute('Value') ?? '';
  if (status !== STATUS_SUCCESS) {
    const message = text(child(child(response, NS.protocol, 'Status') ?? response, NS.protocol, 'StatusMessage'));
    throw new SamlResponseError('idp_error', `The identity provider refused the sign-in (${status || 'no status'}${message ? `: ${message.slice(0, 200)}` : ''}).`);
  }
  const destination = response.getAttribute('Destination');
  if (destination && destination !== sp.acsUrl) refuse(`The response is addressed to ${destination.slice(0, 200)}, not to this ACS URL.`);
  if (children(response, NS.assertion, 'EncryptedAssertion').length > 0) {
    refuse('Encrypted assertions are not supported; configure the IdP to sign, not encrypt, the assertion.');
  }
  // One assertion in the whole document, a direct child of the Response: a second one anywhere
  // (wrapped in Extensions, an Object, Advice) is how signature wrapping smuggles content.
  const all = doc.getElementsByTagNameNS(NS.assertion, 'Assertion');
  const direct = children(response, NS.assertion, 'Assertion');
  if (all.length !== 1 || direct.length !== 1) refuse('The response must carry exactly one assertion.');
  const signatures = children(direct[0]!, NS.dsig, 'Signature');
  if (signatures.length !== 1) refuse('The assertion is not signed; Gatehouse requires signed assertions.');
  checkSignatureAlgorithms(signatures[0]!);
  return { responseInResponseTo: response.getAttribute('InResponseTo') || null };
}

async function verifiedAssertionXml(samlResponse: string, idp: IdpSettings, sp: SpEndpoints): Promise<string> {
  const saml = new SAML({
    // node-saml accepts a signature that verifies against any of them (certificate rollover).
    idpCert: signingCertificates(idp),
    idpIssuer: idp.idpEntityId,
    issuer: sp.spEntityId,
    callbackUrl: sp.acsUrl,
    audience: sp.spEntityId,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    // Gatehouse checks InResponseTo itself, from the signed assertion, and consumes it atomically.
    validateInResponseTo: ValidateInResponseTo.never,
  });
  let profile;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (error) {
    refuse(`The SAML response did not validate: ${error instanceof Error ? error.message.slice(0, 300) : 'unknown error'}.`);
  }
  const xml = profile?.getAssertionXml?.();
  if (!xml) return refuse('The SAML response carries no signed assertion.');
  return xml;
}

function readAttributes(assertion: Element): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  for (const statement of children(assertion, NS.assertion, 'AttributeStatement')) {
    for (const attribute of children(statement, NS.assertion, 'Attribute')) {
      const name = attribute.getAttribute('Name');
      if (!name) continue;
      const values = children(attribute, NS.assertion, 'AttributeValue').map((v) => text(v)).filter((v) => v !== '');
      (attributes[name] ??= []).push(...values);
    }
  }
  return attributes;
}

export function emailFrom(subject: string, nameIdFormat: string | null, attributes: Record<string, string[]>): string | null {
  if (nameIdFormat === NAMEID_EMAIL) return subject;
  for (const name of EMAIL_ATTRIBUTES) {
    const value = attributes[name]?.[0];
    if (value) return value;
  }
  return null;
}

/**
 * Verifies a posted SAMLResponse (base64, as the HTTP-POST binding delivers it) against one
 * connection. It does not decide whether InResponseTo is pending: see `acceptSamlResponse`.
 */
export async function verifySamlResponse(samlResponse: string, idp: IdpSettings, sp: SpEndpoints): Promise<VerifiedAssertion> {
  let envelope: { responseInResponseTo: string | null };
  try {
    envelope = checkEnvelope(parseXml(decode(samlResponse), 'SAMLResponse'), sp);
  } catch (error) {
    if (error instanceof XmlParseError) refuse(error.message);
    throw error;
  }
  const assertion = parseXml(await verifiedAssertionXml(samlResponse, idp, sp), 'The signed assertion').documentElement;
  if (!is(assertion, NS.assertion, 'Assertion')) refuse('The signature does not cover an assertion.');
  const now = Date.now();

  const issuer = text(child(assertion, NS.assertion, 'Issuer'));
  if (issuer !== idp.idpEntityId) refuse(`The assertion was issued by ${issuer.slice(0, 200) || 'nobody'}, not by this connection's IdP.`);
  const assertionId = assertion.getAttribute('ID') || refuse('The assertion has no ID.');

  const conditions = children(assertion, NS.assertion, 'Conditions');
  if (conditions.length !== 1) refuse('The assertion must carry exactly one Conditions element.');
  const condition = conditions[0]!;
  checkWindow(
    now,
    parseInstant(condition.getAttribute('NotBefore'), 'Conditions NotBefore'),
    parseInstant(condition.getAttribute('NotOnOrAfter'), 'Conditions NotOnOrAfter'),
    'The assertion',
  );
  const restrictions = children(condition, NS.assertion, 'AudienceRestriction');
  if (restrictions.length === 0) refuse('The assertion has no AudienceRestriction.');
  for (const restriction of restrictions) {
    const audiences = children(restriction, NS.assertion, 'Audience').map((a) => text(a));
    if (!audiences.includes(sp.spEntityId)) refuse(`The assertion is meant for ${audiences.join(', ').slice(0, 200) || 'no audience'}, not for this SP.`);
  }

  const subjectEl = child(assertion, NS.assertion, 'Subject') ?? refuse('The assertion has no Subject.');
  const nameId = child(subjectEl, NS.assertion, 'NameID') ?? refuse('The assertion has no NameID.');
  const subject = text(nameId) || refuse('The assertion has an empty NameID.');
  const nameIdFormat = nameId.getAttribute('Format') || null;

  // A bearer confirmation for this ACS, still valid: the Web Browser SSO profile's requirement.
  let confirmation: { inResponseTo: string | null; notOnOrAfter: number } | null = null;
  let lastProblem = 'The assertion has no bearer SubjectConfirmation.';
  for (const sc of children(subjectEl, NS.assertion, 'SubjectConfirmation')) {
    if (sc.getAttribute('Method') !== BEARER) continue;
    const data = child(sc, NS.assertion, 'SubjectConfirmationData');
    if (!data) continue;
    try {
      const recipient = data.getAttribute('Recipient');
      if (recipient !== sp.acsUrl) refuse(`The assertion's Recipient is ${recipient?.slice(0, 200) || 'missing'}, not this ACS URL.`);
      const notOnOrAfter = parseInstant(data.getAttribute('NotOnOrAfter'), 'SubjectConfirmationData NotOnOrAfter');
      if (notOnOrAfter === null) refuse('The bearer confirmation has no NotOnOrAfter.');
      checkWindow(now, parseInstant(data.getAttribute('NotBefore'), 'SubjectConfirmationData NotBefore'), notOnOrAfter, 'The bearer confirmation');
      confirmation = { inResponseTo: data.getAttribute('InResponseTo') || null, notOnOrAfter: notOnOrAfter! };
      break;
    } catch (error) {
      if (!(error instanceof SamlResponseError)) throw error;
      lastProblem = error.message;
    }
  }
  if (!confirmation) refuse(lastProblem);
  const { inResponseTo, notOnOrAfter } = confirmation!;
  if (envelope.responseInResponseTo && inResponseTo && envelope.responseInResponseTo !== inResponseTo) {
    refuse('The response and its assertion answer different requests.');
  }

  const attributes = readAttributes(assertion);
  return {
    assertionId,
    issuer,
    subject,
    nameIdFormat,
    email: emailFrom(subject, nameIdFormat, attributes),
    inResponseTo,
    notOnOrAfter,
    attributes,
  };
}
