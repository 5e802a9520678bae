/**
 * SSO connections, managed through the platform API. Every save is checked the way a sign-in would
 * use it (discovery fetched, metadata parsed, certificate decoded), so a mistake is a 400 now
 * rather than a failed sign-in later.
 */
import type { SsoConnection } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { newId } from '../lib/crypto.js';
import { apiError, notFound } from '../lib/errors.js';
import { validateRedirectUrl } from '../tenancy/redirect.js';
import { resolveSendAddresses, SendRefused, systemResolver, type Resolver } from '../lib/addresses.js';
import { guardedFetch } from '../lib/guarded-fetch.js';
import { endpointUrlProblem } from '../lib/addresses.js';
import type { Environment } from '../tenancy/settings.js';
import { connectionView, readConnection, SecretSealer, type Connection, type OAuthConnection, type OidcConfig, type SamlConfig } from './connections.js';
import { isOAuthPreset, OidcError, PRESET_ISSUERS, GITHUB, presetScopes, type OidcPreset, type OidcSettings } from './oidc/presets.js';
import * as q from './queries.js';
import { appleClientSecret } from './social/apple.js';
import { appleFields, oauth2Config, type OAuth2Input } from './social/connection-config.js';
import { discordEndpoints, DISCORD, type OAuth2Config } from './social/oauth2.js';

export interface ConnectionInput extends OAuth2Input {
  type?: 'oidc' | 'oauth2' | 'saml';
  name?: string;
  domains?: string[];
  preset?: OidcPreset | null;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  idpMetadataXml?: string;
  idpEntityId?: string;
  idpSsoUrl?: string;
  idpCertificate?: string;
  /** Not an API field: a saved connection's list, kept by a PATCH that leaves the certificate alone. */
  idpCertificates?: string[];
  allowIdpInitiated?: boolean;
  idpInitiatedRedirectUrl?: string | null;
  teamId?: string;
  keyId?: string;
  privateKey?: string;
}

/** Where the presets live and how the IdP is reached; tests point them at local stand-ins. */
export interface SsoTestHooks {
  presetIssuers?: Partial<Record<OidcPreset, string>>;
  /**
   * Used for every OIDC request (discovery, JWKS, token endpoint) instead of the network; in
   * production it runs after the address check, as the network would.
   */
  fetch?: OidcSettings['fetch'];
  /** Resolves IdP host names for the production address check (tests point names at loopback). */
  resolve?: Resolver;
}

/** The discovery document's endpoints the server itself calls. */
const SERVER_ENDPOINTS = ['token_endpoint', 'jwks_uri', 'userinfo_endpoint'] as const;

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const invalid = (field: string, message: string) => apiError('invalid_request', message, { fields: [field] });

/** https, or http://localhost|127.0.0.1 in development (DESIGN "Development addresses"). */
export function checkIdpUrl(environment: Environment, raw: string, field: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(field, `${field} must be an absolute URL, e.g. https://idp.example.com.`);
  }
  if (url.username || url.password) throw invalid(field, `${field} must not carry credentials.`);
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1';
  if (environment.type === 'production') {
    // The server fetches discovery itself: no loopback, private or link-local addresses (as for webhooks).
    const problem = endpointUrlProblem(raw, 'production');
    if (problem === undefined) return raw;
    throw invalid(field, `${field}${problem.slice('url'.length)}`);
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && local)) return raw;
  throw invalid(
    field,
    environment.type === 'development'
      ? `${field} must be https, or http://localhost:<port> or http://127.0.0.1:<port> in a development environment.`
      : `${field} must be an https URL on a public host in a production environment.`,
  );
}

export function normalizeDomains(domains: string[]): string[] {
  const out = [...new Set(domains.map((d) => d.trim().toLowerCase().replace(/\.$/, '')))];
  for (const domain of out) {
    if (!DOMAIN.test(domain)) throw invalid('domains', `domains: ${JSON.stringify(domain.slice(0, 100))} is not a domain name; list bare domains such as example.com.`);
  }
  return out;
}

export class SsoConnectionService {
  private readonly sealer: SecretSealer;

  constructor(
    private readonly store: Store,
    instanceSecret: string,
    private readonly baseUrl: string,
    private readonly now: () => number,
    private readonly hooks: SsoTestHooks = {},
  ) {
    this.sealer = new SecretSealer(instanceSecret);
  }

  private get presetIssuers(): Partial<Record<OidcPreset, string>> {
    return this.hooks.presetIssuers ?? {};
  }

  private get db() {
    return this.store.db;
  }

  view(connection: Connection): SsoConnection {
    return connectionView(connection, this.baseUrl);
  }

  async list(environment: Environment): Promise<Connection[]> {
    return (await q.listConnections(this.db, environment.id)).map(readConnection);
  }

  async get(environment: Environment, id: string): Promise<Connection> {
    const row = await q.findConnection(this.db, environment.id, id);
    if (!row) throw notFound(`SSO connection ${id}`);
    return readConnection(row);
  }

  /** A start's PKCE verifier, sealed like a client secret: it must be read back at the callback. */
  sealVerifier(environment: Environment, attemptId: string, verifier: string): string {
    return this.sealer.seal(environment.id, attemptId, verifier);
  }

  openVerifier(environment: Environment, attemptId: string, sealed: string): string {
    return this.sealer.open(environment.id, attemptId, sealed);
  }

  /**
   * How this environment reaches IdPs. Production calls go through the address guard (the webhook
   * sender's: every host resolved and checked at each call, the socket pinned to the checked
   * addresses), so neither the issuer nor an endpoint its discovery names can reach internal hosts.
   * Development keeps local IdPs reachable.
   */
  private idpFetch(environment: Environment): OidcSettings['fetch'] {
    if (environment.type !== 'production') return this.hooks.fetch;
    return guardedFetch({ environmentType: 'production', resolve: this.hooks.resolve ?? systemResolver, ...(this.hooks.fetch ? { transport: this.hooks.fetch } : {}) });
  }

  /** The sealed secret read back: the client secret, or Apple's private key. */
  private storedSecret(environment: Environment, connection: Connection): string {
    return connection.row.client_secret ? this.sealer.open(environment.id, connection.id, connection.row.client_secret) : '';
  }

  /** The OIDC or OAuth 2.0 settings to talk to the provider with, secret opened. */
  oidcSettings(environment: Environment, connection: OAuthConnection): OidcSettings {
    const secret = this.storedSecret(environment, connection);
    if (connection.type === 'oauth2') return this.oauth2Settings(environment, connection.config, secret);
    const { preset, issuer, clientId, scopes, teamId, keyId } = connection.config;
    const settings: OidcSettings = { preset, issuer, clientId, clientSecret: secret, scopes };
    const fetch = this.idpFetch(environment);
    if (fetch) settings.fetch = fetch;
    if (preset === 'github' && this.presetIssuers.github) settings.apiBase = this.presetIssuers.github;
    if (preset === 'discord') settings.oauth2 = discordEndpoints(this.presetIssuers.discord);
    if (preset === 'apple') {
      settings.clientSecret = '';
      settings.clientSecretJwt = () => appleClientSecret({ teamId: teamId!, keyId: keyId!, clientId, privateKey: secret, now: this.now() });
    }
    return settings;
  }

  private oauth2Settings(environment: Environment, config: OAuth2Config, secret: string): OidcSettings {
    const { authorizationUrl, tokenUrl, userinfoUrl, userinfoFields, tokenEndpointAuthMethod } = config;
    const settings: OidcSettings = {
      preset: null,
      issuer: new URL(authorizationUrl).origin,
      clientId: config.clientId,
      clientSecret: secret,
      scopes: config.scopes,
      oauth2: { authorizationUrl, tokenUrl, userinfoUrl, fields: userinfoFields, authMethod: tokenEndpointAuthMethod },
    };
    const fetch = this.idpFetch(environment);
    if (fetch) settings.fetch = fetch;
    return settings;
  }

  private presetIssuer(preset: OidcPreset): string {
    if (preset === 'github') return this.presetIssuers.github ?? GITHUB.issuer;
    if (preset === 'discord') return this.presetIssuers.discord ?? new URL(DISCORD.authorizationUrl).origin;
    return this.presetIssuers[preset] ?? PRESET_ISSUERS[preset];
  }

  private async oidcConfig(environment: Environment, input: ConnectionInput, secret: string): Promise<OidcConfig> {
    const preset = input.preset ?? null;
    if (!input.clientId) throw invalid('clientId', 'clientId is required: the client (application) id the IdP gave you.');
    const apple = preset === 'apple' ? appleFields(input, secret) : null;
    if (!apple && !secret) throw invalid('clientSecret', 'clientSecret is required: the client secret the IdP gave you.');
    let issuer: string;
    // A self-managed GitLab is the same software at another address, but whoever runs it decides
    // whether its addresses are checked: its emails are believed only if the operator says so.
    let selfManaged = false;
    if (preset === 'gitlab' && input.issuer) {
      issuer = checkIdpUrl(environment, input.issuer, 'issuer');
      selfManaged = new URL(issuer).href !== new URL(this.presetIssuer('gitlab')).href;
    } else if (preset) {
      issuer = this.presetIssuer(preset);
    } else {
      if (!input.issuer) throw invalid('issuer', 'issuer is required for a generic OIDC connection (or name a preset: google, github, microsoft, apple, gitlab, discord, linkedin).');
      issuer = checkIdpUrl(environment, input.issuer, 'issuer');
    }
    if (preset && !selfManaged && input.trustEmailVerified !== undefined) {
      throw invalid('trustEmailVerified', `trustEmailVerified is for generic connections and self-managed GitLab; the ${preset} preset already knows whether its provider verifies emails.`);
    }
    const scopes = input.scopes?.length ? input.scopes : presetScopes(preset);
    if (!isOAuthPreset(preset) && !scopes.includes('openid')) throw invalid('scopes', 'scopes must include openid.');
    if (!isOAuthPreset(preset)) {
      // The IdP libraries load on first use: a start that never sees SSO never pays for them.
      const { discover } = await import('./oidc/client.js');
      const fetch = this.idpFetch(environment);
      let metadata: Record<string, unknown>;
      try {
        metadata = { ...(await discover({ preset, issuer, clientId: input.clientId, clientSecret: apple ? '' : secret, scopes, ...(fetch ? { fetch } : {}) })).serverMetadata() };
      } catch (error) {
        if (error instanceof OidcError) throw invalid('issuer', error.message);
        throw error;
      }
      if (environment.type === 'production') await this.checkServerEndpoints(metadata);
    }
    return {
      preset,
      issuer,
      clientId: input.clientId,
      scopes,
      ...(preset && !selfManaged ? {} : { trustEmailVerified: input.trustEmailVerified ?? false }),
      ...(apple ?? {}),
    };
  }

  /** The secret a create or patch seals: Apple's private key, else the client secret. */
  private incomingSecret(input: ConnectionInput): string | undefined {
    return input.preset === 'apple' ? input.privateKey : input.clientSecret;
  }

  /**
   * The endpoints discovery names are checked now, for a clear 400: an IdP could otherwise point
   * the code-and-secret POST at an internal host. They are checked again at every call.
   */
  private async checkServerEndpoints(metadata: Record<string, unknown>): Promise<void> {
    for (const name of SERVER_ENDPOINTS) {
      const value = metadata[name];
      if (typeof value !== 'string') continue;
      const problem = endpointUrlProblem(value, 'production');
      const refused = (why: string) => invalid('issuer', `The discovery document's ${name} (${value.slice(0, 200)}) ${why}; a production connection reaches only public https hosts.`);
      if (problem !== undefined) throw refused(problem.slice('url '.length));
      try {
        await resolveSendAddresses(new URL(value), 'production', this.hooks.resolve ?? systemResolver);
      } catch (error) {
        if (error instanceof SendRefused) throw refused(`is refused: ${error.message}`);
        throw refused(`cannot be resolved (${(error as Error).message})`);
      }
    }
  }

  private async samlConfig(environment: Environment, input: ConnectionInput): Promise<SamlConfig> {
    const { CertificateError, MetadataError, normalizeCertificate, parseIdpMetadata } = await import('./saml/index.js');
    let idp: { idpEntityId: string; idpSsoUrl: string; idpCertificate: string; idpCertificates?: string[] };
    if (input.idpMetadataXml !== undefined) {
      try {
        idp = parseIdpMetadata(input.idpMetadataXml);
      } catch (error) {
        if (error instanceof MetadataError) throw invalid('idpMetadataXml', error.message);
        throw error;
      }
    } else {
      if (!input.idpEntityId || !input.idpSsoUrl || !input.idpCertificate) {
        throw invalid('idpMetadataXml', 'Send idpMetadataXml, or all three of idpEntityId, idpSsoUrl and idpCertificate.');
      }
      let idpCertificate: string;
      try {
        idpCertificate = normalizeCertificate(input.idpCertificate);
      } catch (error) {
        if (error instanceof CertificateError) throw invalid('idpCertificate', error.message);
        throw error;
      }
      // A pasted certificate replaces the list (the IdP is trusted with that key alone); a PATCH
      // that keeps the saved one keeps the metadata's other certificates too.
      const kept = input.idpCertificates?.[0] === idpCertificate ? input.idpCertificates : [idpCertificate];
      idp = { idpEntityId: input.idpEntityId, idpSsoUrl: input.idpSsoUrl, idpCertificate, idpCertificates: kept };
    }
    checkIdpUrl(environment, idp.idpSsoUrl, 'idpSsoUrl');
    const allowIdpInitiated = input.allowIdpInitiated ?? false;
    const redirect = input.idpInitiatedRedirectUrl ?? null;
    if (allowIdpInitiated && !redirect) {
      throw invalid('idpInitiatedRedirectUrl', 'allowIdpInitiated needs idpInitiatedRedirectUrl: where a sign-in started at the IdP lands.');
    }
    if (redirect) validateRedirectUrl(environment, redirect);
    return { ...idp, allowIdpInitiated, idpInitiatedRedirectUrl: redirect };
  }

  /** A domain routes to one connection only, or sso/start could not choose. */
  private async assertDomainsFree(environment: Environment, domains: string[], except?: string): Promise<void> {
    for (const other of await this.list(environment)) {
      if (other.id === except) continue;
      const taken = other.domains.find((d) => domains.includes(d));
      if (taken) throw apiError('conflict', `The domain ${taken} already routes to SSO connection ${other.id} (${other.name}); remove it there first.`);
    }
  }

  async create(environment: Environment, input: ConnectionInput): Promise<Connection> {
    if (input.type !== 'oidc' && input.type !== 'oauth2' && input.type !== 'saml') throw invalid('type', 'type must be "oidc", "oauth2" or "saml".');
    if (input.type !== 'oidc' && input.preset) throw invalid('preset', 'Presets are OIDC connections: send type "oidc" with a preset.');
    if (!input.name?.trim()) throw invalid('name', 'name is required: it labels the sign-in button.');
    const domains = normalizeDomains(input.domains ?? []);
    await this.assertDomainsFree(environment, domains);
    const id = newId('ssoc', environment.id);
    const now = this.now();
    const secret = this.incomingSecret(input) ?? '';
    const config =
      input.type === 'oidc'
        ? await this.oidcConfig(environment, input, secret)
        : input.type === 'oauth2'
          ? oauth2Config(environment, input, secret, checkIdpUrl)
          : await this.samlConfig(environment, input);
    await inTransaction(this.db, async (tx) => {
      await q.insertConnection(tx, environment.id, {
        id,
        type: input.type!,
        name: input.name!.trim(),
        domains: JSON.stringify(domains),
        config: JSON.stringify(config),
        client_secret: input.type === 'saml' ? null : this.sealer.seal(environment.id, id, secret),
        created_at: now,
        updated_at: now,
      });
    });
    return this.get(environment, id);
  }

  async update(environment: Environment, id: string, patch: ConnectionInput): Promise<Connection> {
    const current = await this.get(environment, id);
    if (patch.type !== undefined && patch.type !== current.type) throw invalid('type', 'A connection cannot change type; create a new one.');
    const name = patch.name !== undefined ? patch.name.trim() : current.name;
    if (!name) throw invalid('name', 'name cannot be empty.');
    const domains = patch.domains !== undefined ? normalizeDomains(patch.domains) : current.domains;
    await this.assertDomainsFree(environment, domains, id);
    let config: OidcConfig | OAuth2Config | SamlConfig;
    let clientSecret = current.row.client_secret;
    if (current.type === 'oidc' || current.type === 'oauth2') {
      const merged: ConnectionInput = { ...current.config, ...patch };
      if (current.type === 'oidc' && patch.preset !== undefined && patch.preset !== current.config.preset) {
        throw invalid('preset', 'A connection cannot change its preset; create a new one.');
      }
      const incoming = this.incomingSecret(merged);
      const secret = incoming ?? this.storedSecret(environment, current);
      if (merged.preset && merged.preset !== 'gitlab') delete merged.issuer;
      // A GitLab moved to another address is vouched for again only if the operator says so.
      if (merged.preset === 'gitlab' && patch.issuer !== undefined && patch.trustEmailVerified === undefined) delete merged.trustEmailVerified;
      config = current.type === 'oidc' ? await this.oidcConfig(environment, merged, secret) : oauth2Config(environment, merged, secret, checkIdpUrl);
      if (incoming !== undefined) clientSecret = this.sealer.seal(environment.id, id, incoming);
    } else {
      // Fields left out keep their values; new metadata replaces the three IdP fields.
      const merged: ConnectionInput = { ...current.config, ...patch };
      config = await this.samlConfig(environment, merged);
    }
    await q.updateConnection(this.db, environment.id, id, {
      name,
      domains: JSON.stringify(domains),
      config: JSON.stringify(config),
      client_secret: clientSecret,
      updated_at: this.now(),
    });
    return this.get(environment, id);
  }

  async remove(environment: Environment, id: string): Promise<void> {
    const removed = await inTransaction(this.db, (tx) => q.deleteConnection(tx, environment.id, id));
    if (!removed) throw notFound(`SSO connection ${id}`);
  }

  /** The connection whose domains include the email's. */
  async forEmail(environment: Environment, email: string): Promise<Connection | undefined> {
    const domain = email.slice(email.lastIndexOf('@') + 1).trim().toLowerCase();
    return (await this.list(environment)).find((c) => c.domains.includes(domain));
  }
}
