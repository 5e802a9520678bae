import type { OAuth2Endpoints } from '../social/oauth2.js';

/** What the OIDC side needs without loading openid-client (which is imported only when used). */
export type OidcPreset = 'google' | 'github' | 'microsoft' | 'apple' | 'gitlab' | 'discord' | 'linkedin';

export const OIDC_PRESETS: readonly OidcPreset[] = ['google', 'github', 'microsoft', 'apple', 'gitlab', 'discord', 'linkedin'];

/** Presets that speak OAuth 2.0 without ID tokens: their profile comes from the provider's API. */
export type OAuthPreset = 'github' | 'discord';
export const isOAuthPreset = (preset: OidcPreset | null): preset is OAuthPreset => preset === 'github' || preset === 'discord';

export const PRESET_ISSUERS: Record<Exclude<OidcPreset, OAuthPreset>, string> = {
  google: 'https://accounts.google.com',
  // openid-client resolves the multi-tenant issuer template ({tenantid}) from the token's tid.
  microsoft: 'https://login.microsoftonline.com/common/v2.0',
  apple: 'https://appleid.apple.com',
  gitlab: 'https://gitlab.com',
  linkedin: 'https://www.linkedin.com/oauth',
};

/**
 * Providers that verify the addresses they release (email_verified, GitHub's and Discord's
 * verified flags, Apple's relay and verified addresses, Entra's xms_edov): a verified email from
 * them may link an existing account on a social connection (DESIGN "Linking by email").
 */
export const EMAIL_VERIFYING_PRESETS: readonly OidcPreset[] = OIDC_PRESETS;

export const GITHUB = {
  issuer: 'https://github.com',
  authorization_endpoint: 'https://github.com/login/oauth/authorize',
  token_endpoint: 'https://github.com/login/oauth/access_token',
  api: 'https://api.github.com',
};

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
export const GITHUB_SCOPES = ['read:user', 'user:email'];
/** Apple releases only name and email; asking for them requires response_mode=form_post. */
export const APPLE_SCOPES = ['openid', 'email', 'name'];
export const DISCORD_SCOPES = ['identify', 'email'];

/** The scopes a preset asks for when the connection names none. */
export function presetScopes(preset: OidcPreset | null): string[] {
  if (preset === 'github') return GITHUB_SCOPES;
  if (preset === 'discord') return DISCORD_SCOPES;
  if (preset === 'apple') return APPLE_SCOPES;
  return DEFAULT_SCOPES;
}

export interface OidcSettings {
  preset: OidcPreset | null;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** For GitHub and Discord (and tests): where their web and REST endpoints live. */
  apiBase?: string;
  /** Plain OAuth 2.0 (the generic form, Discord): endpoints and where the profile is; no discovery, no ID token. */
  oauth2?: OAuth2Endpoints;
  /** Apple: signs the ES256 JWT that stands for the client secret, afresh for each token request. */
  clientSecretJwt?: () => string;
  /** Reaches the IdP instead of the global fetch (openid-client's customFetch shape): production's address guard, or a test stand-in. */
  fetch?: (url: string, options: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal }) => Promise<Response>;
}

export { OidcError, type OidcProfile } from './profile.js';
