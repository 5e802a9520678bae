export { acceptSamlResponse, MemorySamlLedger, type SamlReplayLedger } from './accept.js';
export { buildAuthnRequestUrl, newRequestId, type SpEndpoints } from './authn-request.js';
export { CertificateError, normalizeCertificate } from './certificate.js';
export { buildSpMetadata, MetadataError, parseIdpMetadata, type IdpSettings } from './metadata.js';
export { SAML_CLOCK_SKEW_MS, SamlResponseError, verifySamlResponse, type SamlFailure, type VerifiedAssertion } from './response.js';
