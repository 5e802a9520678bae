/**
 * A real SAML identity provider in-process: samlify's IdentityProvider signs the responses with a
 * key and self-signed X.509 certificate made here (@peculiar/x509 over node's WebCrypto). The
 * response template is samlify's own, with the values a test wants to vary filled in.
 */
import { inflateRawSync } from 'node:zlib';
import { webcrypto } from 'node:crypto';
import 'reflect-metadata'; // @peculiar/x509's dependency injection needs it loaded first
import * as x509 from '@peculiar/x509';
import * as samlify from 'samlify';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
export const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
export const NAMEID_PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

export interface SigningMaterial {
  certificatePem: string;
  privateKeyPem: string;
}

export async function makeSigningMaterial(commonName = 'Test IdP'): Promise<SigningMaterial> {
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${commonName}`,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 365 * 86_400_000),
    signingAlgorithm: algorithm,
    keys,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { certificatePem: certificate.toString('pem'), privateKeyPem };
}

export interface IssueOptions {
  inResponseTo?: string | null;
  nameId?: string;
  nameIdFormat?: string;
  attributes?: Record<string, string>;
  audience?: string;
  recipient?: string;
  destination?: string;
  issuer?: string;
  /** Offsets from now, in milliseconds. */
  conditionsNotBefore?: number;
  conditionsNotOnOrAfter?: number;
  confirmationNotOnOrAfter?: number;
  /** Sign the Response instead of the Assertion (the assertion then carries no signature). */
  signMessageOnly?: boolean;
}

export interface TestIdp {
  entityId: string;
  ssoUrl: string;
  certificatePem: string;
  metadataXml: string;
  /** A base64 SAMLResponse for the SP, as the HTTP-POST binding carries it. */
  issue(sp: { spEntityId: string; acsUrl: string }, options?: IssueOptions): Promise<string>;
}

const iso = (offset: number) => new Date(Date.now() + offset).toISOString();
const escape = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export async function startTestIdp(input: { entityId?: string; ssoUrl?: string; material?: SigningMaterial } = {}): Promise<TestIdp> {
  const material = input.material ?? (await makeSigningMaterial());
  const entityId = input.entityId ?? 'https://idp.example.test/metadata';
  const ssoUrl = input.ssoUrl ?? 'https://idp.example.test/sso';
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    signingCert: material.certificatePem,
    privateKey: material.privateKeyPem,
    nameIDFormat: [NAMEID_EMAIL],
    singleSignOnService: [
      { Binding: REDIRECT, Location: ssoUrl },
      { Binding: POST, Location: ssoUrl },
    ],
  });
  return {
    entityId,
    ssoUrl,
    certificatePem: material.certificatePem,
    metadataXml: idp.getMetadata(),
    async issue(target, options = {}) {
      const sp = samlify.ServiceProvider({
        entityID: target.spEntityId,
        assertionConsumerService: [{ Binding: POST, Location: target.acsUrl }],
        wantAssertionsSigned: !options.signMessageOnly,
        wantMessageSigned: !!options.signMessageOnly,
      });
      const attributes = Object.entries(options.attributes ?? {})
        .map(([name, value]) => `<saml:Attribute Name="${escape(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:unspecified"><saml:AttributeValue xsi:type="xs:string">${escape(value)}</saml:AttributeValue></saml:Attribute>`)
        .join('');
      const values: Record<string, string> = {
        ID: `_r${webcrypto.randomUUID()}`,
        AssertionID: `_a${webcrypto.randomUUID()}`,
        Destination: options.destination ?? target.acsUrl,
        Audience: options.audience ?? target.spEntityId,
        SubjectRecipient: options.recipient ?? target.acsUrl,
        Issuer: options.issuer ?? entityId,
        IssueInstant: iso(0),
        StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
        ConditionsNotBefore: iso(options.conditionsNotBefore ?? -1000),
        ConditionsNotOnOrAfter: iso(options.conditionsNotOnOrAfter ?? 300_000),
        SubjectConfirmationDataNotOnOrAfter: iso(options.confirmationNotOnOrAfter ?? 300_000),
        NameIDFormat: options.nameIdFormat ?? NAMEID_EMAIL,
        NameID: escape(options.nameId ?? 'ada@corp.example'),
        InResponseTo: options.inResponseTo ?? '',
        AuthnStatement: `<saml:AuthnStatement AuthnInstant="${iso(0)}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        AttributeStatement: attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '',
      };
      const { context } = await idp.createLoginResponse(sp, { extract: {} }, 'post', {}, {
        customTagReplacement: (template: string) => {
          let xml = template;
          for (const [tag, value] of Object.entries(values)) xml = xml.split(`{${tag}}`).join(value);
          if (!options.inResponseTo) xml = xml.split(' InResponseTo=""').join('');
          return { id: values.ID!, context: xml };
        },
      });
      return context;
    },
  };
}

/** The AuthnRequest an SP sent with the HTTP-Redirect binding, read back from its URL. */
export function readRedirectRequest(url: string): { xml: string; id: string; relayState: string | null } {
  const params = new URL(url).searchParams;
  const xml = inflateRawSync(Buffer.from(params.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
  const id = /\sID="([^"]+)"/.exec(xml)?.[1] ?? '';
  return { xml, id, relayState: params.get('RelayState') };
}

export const decodeResponse = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
export const encodeResponse = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');
