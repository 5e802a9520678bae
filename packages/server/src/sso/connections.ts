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

export interface OidcConfig {
  preset: OidcPreset | null;
  issuer: string;
  clientId: string;
  scopes: string[];
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
  | { id: string; type: 'saml'; name: string; domains: string[]; config: SamlConfig; row: ConnectionRow };

export function readConnection(row: ConnectionRow): Connection {
  const base = { id: row.id, name: row.name, domains: JSON.parse(row.domains) as string[], row };
  return row.type === 'oidc'
    ? { ...base, type: 'oidc', config: JSON.parse(row.config) as OidcConfig }
    : { ...base, type: 'saml', config: JSON.parse(row.config) as SamlConfig };
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
    const { preset, issuer, clientId, scopes } = connection.config;
    return { ...common, preset, issuer, clientId, scopes, redirectUri: urls.redirectUri };
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
