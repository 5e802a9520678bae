/**
 * Plain OAuth 2.0 providers (no ID token): the generic `oauth2` connection and the Discord preset.
 * After the code exchange (openid-client, with PKCE and state), the person is read from the
 * provider's userinfo endpoint and the connection's `userinfoFields` say where the id, the email and
 * its verification flag are in that JSON, as dot paths (`data.user.id`, `emails.0.address`).
 */
import { OidcError, type OidcProfile } from '../oidc/profile.js';

export interface UserinfoFields {
  id: string;
  email: string;
  emailVerified?: string;
  firstName?: string;
  lastName?: string;
}

export type TokenAuthMethod = 'client_secret_basic' | 'client_secret_post';

/** The non-secret settings of a `type: "oauth2"` connection (stored as its config). */
export interface OAuth2Config {
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  clientId: string;
  scopes: string[];
  userinfoFields: UserinfoFields;
  /** The operator vouches that this provider verifies the emails it flags as verified. */
  trustEmailVerified: boolean;
  tokenEndpointAuthMethod: TokenAuthMethod;
}

/** What the OAuth 2.0 client needs: endpoints, client authentication, where the profile is. */
export interface OAuth2Endpoints {
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  fields: UserinfoFields;
  authMethod: TokenAuthMethod;
}

/** Discord (discord.com/developers/docs/topics/oauth2, "Get Current User"): `verified` is the email's flag. */
export const DISCORD = {
  authorizationUrl: 'https://discord.com/oauth2/authorize',
  tokenUrl: 'https://discord.com/api/oauth2/token',
  userinfoUrl: 'https://discord.com/api/users/@me',
  fields: { id: 'id', email: 'email', emailVerified: 'verified', firstName: 'global_name' } satisfies UserinfoFields,
};

/** Discord's endpoints, or a stand-in's with the same paths under one base (tests). */
export function discordEndpoints(base?: string): OAuth2Endpoints {
  const at = (url: string) => (base ? `${base}${new URL(url).pathname}` : url);
  return { authorizationUrl: at(DISCORD.authorizationUrl), tokenUrl: at(DISCORD.tokenUrl), userinfoUrl: at(DISCORD.userinfoUrl), fields: DISCORD.fields, authMethod: 'client_secret_post' };
}

const SEGMENT = /^[A-Za-z0-9_$@:-]{1,100}$/;

/** A dot path that `valueAt` can follow: non-empty segments of letters, digits and `_ $ @ : -`. */
export function isDotPath(path: unknown): path is string {
  return typeof path === 'string' && path.length <= 300 && path.split('.').every((segment) => SEGMENT.test(segment));
}

/** Follows a dot path into parsed JSON; numeric segments index arrays. Own properties only. */
export function valueAt(json: unknown, path: string): unknown {
  let here: unknown = json;
  for (const segment of path.split('.')) {
    if (Array.isArray(here)) here = /^\d+$/.test(segment) ? here[Number(segment)] : undefined;
    else if (here !== null && typeof here === 'object' && Object.prototype.hasOwnProperty.call(here, segment)) here = (here as Record<string, unknown>)[segment];
    else return undefined;
  }
  return here;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** The person in a userinfo answer. No id is an invalid answer; no flag means not verified. */
export function profileFromUserinfo(json: unknown, fields: UserinfoFields): OidcProfile {
  const id = valueAt(json, fields.id);
  const subject = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : text(id);
  if (!subject || subject.length > 255) throw new OidcError('invalid_response', `The provider's userinfo answer has no usable id at "${fields.id}".`);
  const flag = fields.emailVerified ? valueAt(json, fields.emailVerified) : undefined;
  return {
    subject,
    email: text(valueAt(json, fields.email)),
    emailVerified: flag === true || flag === 'true',
    firstName: fields.firstName ? text(valueAt(json, fields.firstName)) : null,
    lastName: fields.lastName ? text(valueAt(json, fields.lastName)) : null,
  };
}

type Fetch = (url: string, options: { method: string; headers: Record<string, string> }) => Promise<Response>;

/** GET the userinfo endpoint with the access token; any failure is the provider's, never a 500. */
export async function fetchUserinfo(url: string, accessToken: string, fetchImpl: Fetch = fetch as Fetch): Promise<unknown> {
  let response: Response;
  try {
    response = await Promise.race([
      fetchImpl(url, { method: 'GET', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Gatehouse' } }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout after 10 s')), 10_000).unref()),
    ]);
  } catch (cause) {
    throw new OidcError('idp_unavailable', `The provider's userinfo endpoint could not be reached (${cause instanceof Error ? cause.message : 'unknown error'}); try again later.`);
  }
  if (!response.ok) throw new OidcError('invalid_response', `The provider's userinfo endpoint answered ${response.status}.`);
  const body = await response.text();
  if (body.length > 256 * 1024) throw new OidcError('invalid_response', "The provider's userinfo answer is too large.");
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new OidcError('invalid_response', "The provider's userinfo answer is not JSON.");
  }
}
