/**
 * OIDC relying party on openid-client: discovery, the authorization URL (code flow, PKCE S256,
 * state, nonce) and the callback (token exchange; the ID token is checked per OIDC Core by the
 * library: signature against the IdP's JWKS, iss, aud, exp, iat, nonce). GitHub is OAuth 2.0
 * without ID tokens: its profile and verified emails come from its API.
 */
import * as oidc from 'openid-client';

import { appleBoolean } from '../social/apple.js';
import { fetchUserinfo, profileFromUserinfo } from '../social/oauth2.js';
import { GITHUB, OidcError, type OidcProfile, type OidcSettings } from './presets.js';

export * from './presets.js';

/** client_secret_basic unless the IdP offers only client_secret_post (DESIGN "OIDC defaults"). */
function clientAuth(secret: string, jwt?: () => string): oidc.ClientAuth {
  // Apple: a JWT signed afresh for each request stands for the secret, sent in the body.
  if (jwt) return (as, client, body, headers) => oidc.ClientSecretPost(jwt())(as, client, body, headers);
  return (as, client, body, headers) => {
    const basic = oidc.ClientSecretBasic(secret);
    const post = oidc.ClientSecretPost(secret);
    const methods = as.token_endpoint_auth_methods_supported;
    const onlyPost = Array.isArray(methods) && methods.includes('client_secret_post') && !methods.includes('client_secret_basic');
    return (onlyPost ? post : basic)(as, client, body, headers);
  };
}

function insecureOptions(url: string) {
  // Only development connections may name an http issuer (checked when saved).
  return url.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {};
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`.slice(0, 300);
  }
  return 'unknown error';
}

export async function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  if (settings.oauth2) {
    const { authorizationUrl, tokenUrl, authMethod } = settings.oauth2;
    const config = new oidc.Configuration(
      { issuer: new URL(authorizationUrl).origin, authorization_endpoint: authorizationUrl, token_endpoint: tokenUrl },
      settings.clientId,
      settings.clientSecret,
      authMethod === 'client_secret_post' ? oidc.ClientSecretPost(settings.clientSecret) : oidc.ClientSecretBasic(settings.clientSecret),
    );
    // Only development connections may name http endpoints (checked when saved).
    if (tokenUrl.startsWith('http:')) oidc.allowInsecureRequests(config);
    if (settings.fetch) config[oidc.customFetch] = settings.fetch;
    return config;
  }
  if (settings.preset === 'github') {
    // A stand-in GitHub (tests) serves the web and API endpoints under one base.
    const base = settings.apiBase;
    const config = new oidc.Configuration(
      base
        ? { issuer: base, authorization_endpoint: `${base}/login/oauth/authorize`, token_endpoint: `${base}/login/oauth/access_token` }
        : { issuer: GITHUB.issuer, authorization_endpoint: GITHUB.authorization_endpoint, token_endpoint: GITHUB.token_endpoint },
      settings.clientId,
      settings.clientSecret,
      oidc.ClientSecretPost(settings.clientSecret),
    );
    if (base?.startsWith('http:')) oidc.allowInsecureRequests(config);
    if (settings.fetch) config[oidc.customFetch] = settings.fetch;
    return config;
  }
  let config: oidc.Configuration;
  try {
    const metadata = settings.clientSecret ? { client_secret: settings.clientSecret } : {};
    config = await oidc.discovery(new URL(settings.issuer), settings.clientId, metadata, clientAuth(settings.clientSecret, settings.clientSecretJwt), {
      ...insecureOptions(settings.issuer),
      ...(settings.fetch ? { [oidc.customFetch]: settings.fetch } : {}),
      timeout: 10,
    });
  } catch (error) {
    throw new OidcError(
      'discovery_failed',
      `The discovery document of ${settings.issuer} could not be read (${describe(error)}). Check that issuer is the IdP's issuer identifier and that ${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration answers.`,
    );
  }
  // openid-client trusts an ID token from the token endpoint on TLS alone (OIDC Core 3.1.3.7 allows
  // it); Gatehouse checks its signature against the IdP's JWKS as well, so a key mix-up or a
  // man in the middle of a development http issuer cannot mint identities.
  oidc.enableNonRepudiationChecks(config);
  return config;
}

export interface AuthorizationStart {
  url: string;
  state: string;
  nonce: string | null;
  codeVerifier: string;
}

export async function authorizationUrl(config: oidc.Configuration, settings: OidcSettings, redirectUri: string): Promise<AuthorizationStart> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const github = settings.preset === 'github';
  const plain = github || settings.oauth2 !== undefined;
  const nonce = plain ? null : oidc.randomNonce();
  const parameters: Record<string, string> = {
    redirect_uri: redirectUri,
    scope: settings.scopes.join(' '),
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  };
  if (nonce) parameters.nonce = nonce;
  if (!github) parameters.response_type = 'code';
  // Apple answers with a POST when name or email is asked for (and refuses a query answer then).
  if (settings.preset === 'apple') parameters.response_mode = 'form_post';
  return { url: oidc.buildAuthorizationUrl(config, parameters).href, state, nonce, codeVerifier };
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** Exchanges the code; the checks are the library's, our expected values come from the consumed start. */
export async function completeAuthorization(
  config: oidc.Configuration,
  settings: OidcSettings,
  callbackUrl: URL,
  expected: { state: string; nonce: string | null; codeVerifier: string },
): Promise<OidcProfile> {
  const error = callbackUrl.searchParams.get('error');
  if (error) {
    const description = callbackUrl.searchParams.get('error_description');
    throw new OidcError('idp_error', `The identity provider refused the sign-in (${error.slice(0, 100)}${description ? `: ${description.slice(0, 200)}` : ''}).`);
  }
  const github = settings.preset === 'github';
  const plain = github || settings.oauth2 !== undefined;
  let tokens;
  try {
    tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: expected.codeVerifier,
      expectedState: expected.state,
      ...(expected.nonce ? { expectedNonce: expected.nonce } : {}),
      idTokenExpected: !plain,
    });
  } catch (cause) {
    const unreachable = cause instanceof TypeError || (cause instanceof Error && /fetch failed|ECONNREFUSED|timeout|aborted/i.test(describe(cause)));
    throw new OidcError(
      unreachable ? 'idp_unavailable' : 'invalid_response',
      unreachable ? `The identity provider could not be reached to finish the sign-in (${describe(cause)}); try again later.` : `The identity provider's answer did not verify (${describe(cause)}).`,
    );
  }
  if (github) return githubProfile(tokens.access_token, settings.apiBase ?? GITHUB.api, settings.fetch);
  if (settings.oauth2) {
    const userinfo = await fetchUserinfo(settings.oauth2.userinfoUrl, tokens.access_token, settings.fetch);
    return profileFromUserinfo(userinfo, settings.oauth2.fields);
  }
  const claims = tokens.claims();
  if (!claims) throw new OidcError('invalid_response', 'The identity provider returned no ID token.');
  return profileFromClaims(claims, settings.preset);
}

/** The person in a verified ID token's claims. */
export function profileFromClaims(claims: Record<string, unknown> & { sub: string }, preset: OidcSettings['preset']): OidcProfile {
  return {
    subject: claims.sub,
    email: str(claims.email),
    // Entra ID never sends email_verified; its optional xms_edov says the tenant verified the email's
    // domain. Honoured for any connection (a single-tenant Entra ID is a generic one), as what the IdP signs.
    // Apple sends its booleans as "true"/"false" strings too.
    emailVerified: claims.email_verified === true || claims.xms_edov === true || (preset === 'apple' && appleBoolean(claims.email_verified)),
    firstName: str(claims.given_name),
    lastName: str(claims.family_name),
  };
}

/** GitHub: the numeric user id is the subject; only a primary, verified email counts as proven. */
async function githubProfile(accessToken: string, apiBase: string, fetcher: OidcSettings['fetch']): Promise<OidcProfile> {
  const get = async (path: string) => {
    let response: Response;
    try {
      const init = {
        method: 'GET',
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json', 'user-agent': 'Gatehouse' },
        signal: AbortSignal.timeout(10_000),
      };
      // The connection's fetch (the production address guard) reaches the API too.
      response = await (fetcher ? fetcher(`${apiBase}${path}`, init) : fetch(`${apiBase}${path}`, init));
    } catch (cause) {
      throw new OidcError('idp_unavailable', `GitHub's API could not be reached (${describe(cause)}); try again later.`);
    }
    if (!response.ok) throw new OidcError('invalid_response', `GitHub's API answered ${response.status} to ${path}.`);
    return response.json() as Promise<unknown>;
  };
  const user = (await get('/user')) as { id?: unknown; name?: unknown };
  if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new OidcError('invalid_response', 'GitHub returned no user id.');
  const emails = (await get('/user/emails')) as { email?: unknown; primary?: unknown; verified?: unknown }[];
  const list = Array.isArray(emails) ? emails : [];
  const chosen = list.find((e) => e.primary === true && e.verified === true) ?? list.find((e) => e.verified === true) ?? list.find((e) => e.primary === true);
  const name = str(user.name);
  const [firstName, ...rest] = name ? name.split(' ') : [];
  return {
    subject: String(user.id),
    email: str(chosen?.email),
    emailVerified: chosen?.verified === true,
    firstName: firstName ?? null,
    lastName: rest.length ? rest.join(' ') : null,
  };
}
