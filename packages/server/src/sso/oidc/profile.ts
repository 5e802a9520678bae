// What an IdP's answer yields, and how it fails: shared by the OIDC and the plain OAuth 2.0 clients.

/** What a successful callback proves about the person. */
export interface OidcProfile {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
}

export class OidcError extends Error {
  override name = 'OidcError';
  constructor(
    readonly reason: 'discovery_failed' | 'invalid_response' | 'idp_error' | 'idp_unavailable',
    message: string,
  ) {
    super(message);
  }
}

