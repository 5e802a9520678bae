/**
 * Metadata both ways: the IdP's metadata XML read into the three fields a connection needs, and
 * the SP metadata this server publishes for each SAML connection.
 */
import { CertificateError, normalizeCertificate } from './certificate.js';
import { NS, XmlParseError, child, children, is, parseXml, text } from './xml.js';

export const BINDING_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
export const BINDING_POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
export const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
export const NAMEID_PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

export class MetadataError extends Error {
  override name = 'MetadataError';
}

export interface IdpSettings {
  idpEntityId: string;
  idpSsoUrl: string;
  /** PEM: the first signing certificate (what a single pasted certificate fills). */
  idpCertificate: string;
  /**
   * Every signing certificate the metadata lists (PEM), the first included: during a rollover the
   * IdP publishes the old and the new one, and may sign with either.
   */
  idpCertificates?: string[];
}

/** The certificates a signature may verify against. */
export function signingCertificates(idp: IdpSettings): string[] {
  return idp.idpCertificates?.length ? idp.idpCertificates : [idp.idpCertificate];
}

export function parseIdpMetadata(xml: string): IdpSettings {
  let doc: Document;
  try {
    doc = parseXml(xml, 'idpMetadataXml');
  } catch (error) {
    if (error instanceof XmlParseError) throw new MetadataError(error.message);
    throw error;
  }
  const root = doc.documentElement;
  let entities: Element[];
  if (is(root, NS.metadata, 'EntityDescriptor')) entities = [root];
  else if (is(root, NS.metadata, 'EntitiesDescriptor')) entities = children(root, NS.metadata, 'EntityDescriptor');
  else throw new MetadataError('idpMetadataXml is not SAML 2.0 metadata: its root must be an md:EntityDescriptor.');

  const idps = entities.filter((e) => child(e, NS.metadata, 'IDPSSODescriptor'));
  if (idps.length === 0) throw new MetadataError('idpMetadataXml describes no identity provider (no md:IDPSSODescriptor).');
  if (idps.length > 1) throw new MetadataError('idpMetadataXml describes several identity providers; paste the metadata of one.');
  const entity = idps[0]!;
  const descriptor = child(entity, NS.metadata, 'IDPSSODescriptor')!;

  const idpEntityId = entity.getAttribute('entityID')?.trim() ?? '';
  if (!idpEntityId) throw new MetadataError('idpMetadataXml has no entityID on its md:EntityDescriptor.');

  const redirect = children(descriptor, NS.metadata, 'SingleSignOnService').find(
    (s) => s.getAttribute('Binding') === BINDING_REDIRECT,
  );
  const idpSsoUrl = redirect?.getAttribute('Location')?.trim() ?? '';
  if (!idpSsoUrl) {
    throw new MetadataError('idpMetadataXml has no SingleSignOnService with the HTTP-Redirect binding, which Gatehouse sends requests with.');
  }

  const keys = children(descriptor, NS.metadata, 'KeyDescriptor').filter((k) => {
    const use = k.getAttribute('use');
    return !use || use === 'signing';
  });
  const certificates: string[] = [];
  for (const key of keys) {
    const info = child(key, NS.dsig, 'KeyInfo');
    for (const data of info ? children(info, NS.dsig, 'X509Data') : []) {
      for (const cert of children(data, NS.dsig, 'X509Certificate')) if (text(cert)) certificates.push(text(cert));
    }
  }
  if (certificates.length === 0) throw new MetadataError('idpMetadataXml has no signing certificate (md:KeyDescriptor with ds:X509Certificate).');
  let normalized: string[];
  try {
    normalized = [...new Set(certificates.map(normalizeCertificate))];
  } catch (error) {
    if (error instanceof CertificateError) throw new MetadataError(`idpMetadataXml: ${error.message}`);
    throw error;
  }
  return { idpEntityId, idpSsoUrl, idpCertificate: normalized[0]!, idpCertificates: normalized };
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** What an IdP administrator imports: who we are, where assertions go, that they must be signed. */
export function buildSpMetadata(sp: { spEntityId: string; acsUrl: string }): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<md:EntityDescriptor xmlns:md="${NS.metadata}" entityID="${escapeXml(sp.spEntityId)}">`,
    `  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="${NS.protocol}">`,
    `    <md:NameIDFormat>${NAMEID_EMAIL}</md:NameIDFormat>`,
    `    <md:NameIDFormat>${NAMEID_PERSISTENT}</md:NameIDFormat>`,
    `    <md:AssertionConsumerService Binding="${BINDING_POST}" Location="${escapeXml(sp.acsUrl)}" index="0" isDefault="true"/>`,
    '  </md:SPSSODescriptor>',
    '</md:EntityDescriptor>',
    '',
  ].join('\n');
}
