/**
 * A stored connection read into what the flows need, and the URLs Gatehouse serves for it. The
 * OIDC client secret is sealed (AES-256-GCM, bound to the environment and connection) under a
 * key derived from the instance secret: it must be read back to call the token endpoint.
 */
import type { SsoConnection } from '@gatehouse/contract';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { SsoConnectionsTable } from '../db/schema.js';
import { deriveSubkey } from '../lib/cursor.js';
import type { EnvironmentId } from '../lib/ids.js';
import type { OidcPreset } from './oidc/presets.js';
import type { OAuth2Config } from './social/oauth2.js';

export interface OidcConfig {
  preset: OidcPreset | null;
  issuer: string;
  clientId: string;
  scopes: string[];
  /** Generic OIDC: the operator vouches for the IdP's email_verified (links existing accounts on a social connection). */
  trustEmailVerified?: boolean;
  /** Apple: the Team ID and Key ID that sign the client secret JWT (the key itself is stored sealed). */
  teamId?: string;
  keyId?: string;
}

export interface SamlConfig {
  idpEntityId: string;
  idpSsoUrl: string;
  idpCertificate: string;
  /** Every signing certificate of the IdP's metadata (rollover); absent on connections saved before. */
  idpCertificates?: string[];
  allowIdpInitiated: boolean;
  /** Where an IdP-initiated sign-in lands (required when allowed): no start named one. */
  idpInitiatedRedirectUrl: string | null;
}

export type ConnectionRow = Selectable<SsoConnectionsTable>;

export type Connection =
  | { id: string; type: 'oidc'; name: string; domains: string[]; config: OidcConfig; row: ConnectionRow }
  | { id: string; type: 'oauth2'; name: string; domains: string[]; config: OAuth2Config; row: ConnectionRow }
  | { id: string; type: 'saml'; name: string; domains: string[]; config: SamlConfig; row: ConnectionRow };

/** The connections whose browser comes back to the OAuth redirect URI (OIDC, presets, generic OAuth 2.0). */
export type OAuthConnection = Connection & { type: 'oidc' | 'oauth2' };

export function readConnection(row: ConnectionRow): Connection {
  const base = { id: row.id, name: row.name, domains: JSON.parse(row.domains) as string[], row };
  if (row.type === 'oidc') return { ...base, type: 'oidc', config: JSON.parse(row.config) as OidcConfig };
  if (row.type === 'oauth2') return { ...base, type: 'oauth2', config: JSON.parse(row.config) as OAuth2Config };
  return { ...base, type: 'saml', config: JSON.parse(row.config) as SamlConfig };
}

/** What a sign-in button shows: the preset's name, else the protocol. */
export function providerOf(connection: Connection): string {
  return (connection.type === 'oidc' && connection.config.preset) || connection.type;
}

export function endpoints(baseUrl: string, id: string) {
  const base = baseUrl.replace(/\/$/, '');
  return {
    redirectUri: `${base}/v1/sso/oidc/${id}/callback`,
    spEntityId: `${base}/v1/sso/saml/${id}/metadata`,
    acsUrl: `${base}/v1/sso/saml/${id}/acs`,
    spMetadataUrl: `${base}/v1/sso/saml/${id}/metadata`,
  };
}

export function connectionView(connection: Connection, baseUrl: string): SsoConnection {
  const urls = endpoints(baseUrl, connection.id);
  const common = {
    id: connection.id,
    type: connection.type,
    name: connection.name,
    domains: connection.domains,
    createdAt: connection.row.created_at,
    updatedAt: connection.row.updated_at,
  };
  if (connection.type === 'oidc') {
    const { preset, issuer, clientId, scopes, trustEmailVerified, teamId, keyId } = connection.config;
    return {
      ...common,
      preset,
      issuer,
      clientId,
      scopes,
      ...(preset && trustEmailVerified === undefined ? {} : { trustEmailVerified: trustEmailVerified ?? false }),
      ...(teamId ? { teamId } : {}),
      ...(keyId ? { keyId } : {}),
      redirectUri: urls.redirectUri,
    };
  }
  if (connection.type === 'oauth2') {
    const { authorizationUrl, tokenUrl, userinfoUrl, clientId, scopes, userinfoFields, trustEmailVerified, tokenEndpointAuthMethod } = connection.config;
    return { ...common, authorizationUrl, tokenUrl, userinfoUrl, clientId, scopes, userinfoFields, trustEmailVerified, tokenEndpointAuthMethod, redirectUri: urls.redirectUri };
  }
  const { idpEntityId, idpSsoUrl, allowIdpInitiated } = connection.config;
  return { ...common, idpEntityId, idpSsoUrl, allowIdpInitiated, spEntityId: urls.spEntityId, acsUrl: urls.acsUrl, spMetadataUrl: urls.spMetadataUrl };
}

export class SecretSealer {
  private readonly key: Buffer;

  constructor(instanceSecret: string) {
    this.key = deriveSubkey(instanceSecret, 'sso-secrets');
  }

  seal(environmentId: EnvironmentId, connectionId: string, secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`${environmentId}/${connectionId}`));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open(environmentId: EnvironmentId, connectionId: string, sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || !ciphertext) throw new Error(`SSO connection ${connectionId} has a secret in an unknown format`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${environmentId}/${connectionId}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}
