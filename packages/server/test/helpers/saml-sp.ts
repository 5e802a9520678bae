/** The SP side of the core SAML tests: one connection's settings and a ledger with a pending request. */
import { MemorySamlLedger, newRequestId, parseIdpMetadata, type IdpSettings, type SpEndpoints } from '../../src/sso/saml/index.js';
import type { TestIdp } from './saml-idp.js';

export const SP: SpEndpoints = {
  spEntityId: 'https://auth.gatehouse.test/v1/sso/saml/ssoc_test/metadata',
  acsUrl: 'https://auth.gatehouse.test/v1/sso/saml/ssoc_test/acs',
};

export function connectionFor(idp: TestIdp): IdpSettings {
  return parseIdpMetadata(idp.metadataXml);
}

export function pendingRequest(ledger: MemorySamlLedger): string {
  const id = newRequestId();
  ledger.addRequest(id, Date.now() + 600_000);
  return id;
}
