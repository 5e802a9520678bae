/** What the OIDC side needs without loading openid-client (which is imported only when used). */
export type OidcPreset = 'google' | 'github' | 'microsoft';

export const PRESET_ISSUERS: Record<Exclude<OidcPreset, 'github'>, string> = {
  google: 'https://accounts.google.com',
  // openid-client resolves the multi-tenant issuer template ({tenantid}) from the token's tid.
  microsoft: 'https://login.microsoftonline.com/common/v2.0',
};

export const GITHUB = {
  issuer: 'https://github.com',
  authorization_endpoint: 'https://github.com/login/oauth/authorize',
  token_endpoint: 'https://github.com/login/oauth/access_token',
  api: 'https://api.github.com',
};

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
export const GITHUB_SCOPES = ['read:user', 'user:email'];

export interface OidcSettings {
  preset: OidcPreset | null;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** For GitHub (and tests): where its REST API lives. */
  apiBase?: string;
  /** Reaches the IdP instead of the global fetch (openid-client's customFetch shape): production's address guard, or a test stand-in. */
  fetch?: (url: string, options: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal }) => Promise<Response>;
}

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

