/**
 * The SP-initiated AuthnRequest, sent with the HTTP-Redirect binding: deflated, base64'd and put in
 * the IdP's SSO URL with the RelayState. The request is not signed (the SP metadata says so): an
 * AuthnRequest grants nothing, and what comes back is bound to it by its ID (InResponseTo).
 */
import { randomBytes } from 'node:crypto';
import { SAML } from '@node-saml/node-saml';
import { signingCertificates, type IdpSettings } from './metadata.js';

export interface SpEndpoints {
  spEntityId: string;
  acsUrl: string;
}

/** An xs:ID (an NCName: it may not start with a digit), 160 bits from the CSPRNG. */
export function newRequestId(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

export async function buildAuthnRequestUrl(input: {
  idp: IdpSettings;
  sp: SpEndpoints;
  requestId: string;
  /** Opaque: the server maps it back to the start; it carries nothing the IdP could change. */
  relayState: string;
}): Promise<string> {
  const saml = new SAML({
    entryPoint: input.idp.idpSsoUrl,
    issuer: input.sp.spEntityId,
    callbackUrl: input.sp.acsUrl,
    idpCert: signingCertificates(input.idp),
    generateUniqueId: () => input.requestId,
    // No NameIDPolicy format and no RequestedAuthnContext: IdPs configured for persistent ids or
    // MFA refuse requests that insist otherwise; the email rule reads whatever format comes back.
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    authnRequestBinding: 'HTTP-Redirect',
  });
  return saml.getAuthorizeUrlAsync(input.relayState, undefined, {});
}
