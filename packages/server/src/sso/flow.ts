/**
 * The sign-in flow: sso/start records an attempt (hashed state, nonce, PKCE verifier or SAML
 * request id, the checked redirect URL); the IdP's answer consumes it once; the account is found
 * or created by the linking rule; the browser goes back to redirectUrl with a one-time token that
 * sso/verify exchanges for a session, as a magic link's is.
 */
import type { Configuration } from 'openid-client';
import type { Store } from '../db/index.js';
import { emailKey, normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { ApiError, apiError } from '../lib/errors.js';
import { linkWithToken, validateRedirectUrl } from '../tenancy/redirect.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import { endpoints, providerOf, type Connection, type OAuthConnection } from './connections.js';
import { OidcError, type OidcProfile } from './oidc/presets.js';
import { holdLink } from './identity-queries.js';
import type { HeldLink, IdentityRecorder } from './identity-service.js';
import { SignInRefused } from './refusal.js';
import { appleUserName } from './social/apple.js';
import { emailDomain, isSocial, vouchedFor, vouchesForEmail } from './social/trust.js';
import { firstOf, WS_CLAIMS } from './saml/attributes.js';
import * as q from './queries.js';
import type { SamlReplayLedger } from './saml/index.js';

import type { SsoConnectionService } from './service.js';

/** The IdP libraries load on first use (npm start stays fast). */
const oidcClient = () => import('./oidc/client.js');
const samlCore = () => import('./saml/index.js');

export const ATTEMPT_TTL_MS = 10 * 60_000;
/** The handoff token only crosses one redirect: a short life is enough. */
export const HANDOFF_TTL_MS = 5 * 60_000;
const DISCOVERY_CACHE_MS = 10 * 60_000;

/** Where the browser goes next: back to the application, with a token or an error. */
export interface Redirect {
  location: string;
}

export { SignInRefused };

const INVALID_STATE =
  'This sign-in link is unknown, expired, already used or altered, so Gatehouse cannot tell where to return; start the sign-in again from the application.';

function requireSso(environment: Environment): void {
  if (!environment.settings.authMethods.sso) {
    throw apiError('method_disabled', 'Single sign-on is disabled for this environment. Enable authMethods.sso in the environment settings, or use another method.');
  }
}

function withError(redirectUrl: string, code: string, description: string): string {
  const url = new URL(redirectUrl);
  url.searchParams.set('error', code);
  url.searchParams.set('error_description', description);
  return url.href;
}

export class SsoFlowService {
  /** Discovery per connection, until it changes (updatedAt) or 10 minutes pass. */
  private readonly configs = new Map<string, { config: Configuration; at: number; version: number }>();

  constructor(
    private readonly options: {
      store: Store;
      connections: SsoConnectionService;
      identity: IdentityService;
      tenancy: TenancyService;
      baseUrl: string;
      now: () => number;
      /** Writes identities with their webhook event (identity-service.ts). */
      identities: IdentityRecorder;
    },
  ) {}

  private get db() {
    return this.options.store.db;
  }

  private async oidcConfiguration(environment: Environment, connection: OAuthConnection): Promise<Configuration> {
    const cached = this.configs.get(connection.id);
    if (cached && cached.version === connection.row.updated_at && cached.at + DISCOVERY_CACHE_MS > Date.now()) return cached.config;
    const config = await (await oidcClient()).discover(this.options.connections.oidcSettings(environment, connection));
    // Keyed by the connection alone, so an edited connection replaces its entry rather than adding one.
    this.configs.set(connection.id, { config, at: Date.now(), version: connection.row.updated_at });
    return config;
  }

  /** With `linkUserId` (POST /v1/me/identities) the provider is linked to that user instead of signing in. */
  async start(environment: Environment, input: { email?: string; connectionId?: string; redirectUrl: string }, linkUserId?: string): Promise<{ url: string }> {
    requireSso(environment);
    const redirect = validateRedirectUrl(environment, input.redirectUrl);
    let connection: Connection | undefined;
    if (input.connectionId !== undefined) {
      connection = await this.options.connections.get(environment, input.connectionId);
    } else if (input.email !== undefined) {
      connection = await this.options.connections.forEmail(environment, normalizeEmail(input.email));
      if (!connection) {
        throw apiError('sso_not_configured', 'No SSO connection serves this email domain. Sign in with another method, or ask the operator to add the domain to a connection.');
      }
    } else {
      throw apiError('invalid_request', 'Send email (routed by its domain) or connectionId.', { fields: ['email', 'connectionId'] });
    }
    const now = this.options.now();
    // Expired starts are swept as new ones arrive (as captured mail is): they must not pile up.
    await q.sweepAttempts(this.db, environment.id, now);
    const urls = endpoints(this.options.baseUrl, connection.id);
    const attempt = { id: newId('ssoa', environment.id), connection_id: connection.id, redirect_url: redirect.href, created_at: now, expires_at: now + ATTEMPT_TTL_MS, link_user_id: linkUserId ?? null };
    if (connection.type === 'oidc' || connection.type === 'oauth2') {
      let config: Configuration;
      try {
        config = await this.oidcConfiguration(environment, connection);
      } catch (error) {
        if (error instanceof OidcError) throw apiError('unavailable', `The identity provider of ${connection.name} cannot be reached now; try again later. (${error.message})`);
        throw error;
      }
      const settings = this.options.connections.oidcSettings(environment, connection);
      const started = await (await oidcClient()).authorizationUrl(config, settings, urls.redirectUri);
      await q.insertAttempt(this.db, environment.id, {
        ...attempt,
        state_hash: sha256Hex(started.state),
        nonce: started.nonce,
        code_verifier: this.options.connections.sealVerifier(environment, attempt.id, started.codeVerifier),
      });
      return { url: started.url };
    }
    const { buildAuthnRequestUrl, newRequestId } = await samlCore();
    const state = newSecret('', 32);
    const requestId = newRequestId();
    const url = await buildAuthnRequestUrl({ idp: connection.config, sp: urls, requestId, relayState: state });
    await q.insertAttempt(this.db, environment.id, { ...attempt, state_hash: sha256Hex(state), saml_request_id: requestId });
    return { url };
  }

  /** The environment and connection named in a callback path; unknown ones are a 404. */
  private async callbackConnection(connectionId: string, type: 'oidc' | 'saml'): Promise<{ environment: Environment; connection: Connection }> {
    const environmentId = await q.connectionEnvironment(this.db, connectionId);
    if (!environmentId) throw apiError('not_found', `SSO connection ${connectionId} does not exist.`);
    const environment = await this.options.tenancy.getEnvironment(environmentId);
    const connection = await this.options.connections.get(environment, connectionId);
    // OIDC and plain OAuth 2.0 connections share the redirect URI.
    const kind = connection.type === 'oauth2' ? 'oidc' : connection.type;
    if (kind !== type) throw apiError('not_found', `SSO connection ${connectionId} is not a ${type.toUpperCase()} connection.`);
    return { environment, connection };
  }

  /** Only that the connection exists and is SAML: its SP metadata holds nothing secret. */
  async samlConnection(connectionId: string): Promise<void> {
    await this.callbackConnection(connectionId, 'saml');
  }

  async oidcCallback(connectionId: string, query: URLSearchParams): Promise<Redirect> {
    const { environment, connection } = await this.callbackConnection(connectionId, 'oidc');
    if (connection.type === 'saml') throw new Error('unreachable');
    // Apple's form_post: the name comes once, unsigned, beside the code; the ID token is taken
    // from the token endpoint only, never from the form.
    const appleName = connection.type === 'oidc' && connection.config.preset === 'apple' ? appleUserName(query.get('user')) : null;
    query.delete('user');
    query.delete('id_token');
    const state = query.get('state');
    if (!state) throw apiError('invalid_request', INVALID_STATE, { fields: ['state'] });
    const attempt = await q.consumeAttemptByState(this.db, environment.id, connection.id, sha256Hex(state), this.options.now());
    if (!attempt || attempt.code_verifier === null) throw apiError('invalid_request', INVALID_STATE, { fields: ['state'] });
    return this.finish(environment, attempt, async () => {
      const config = await this.oidcConfiguration(environment, connection).catch((error: unknown) => {
        throw error instanceof OidcError ? new SignInRefused('idp_unavailable', error.message) : error;
      });
      const callbackUrl = new URL(endpoints(this.options.baseUrl, connection.id).redirectUri);
      callbackUrl.search = query.toString();
      let profile: OidcProfile;
      try {
        profile = await (await oidcClient()).completeAuthorization(config, this.options.connections.oidcSettings(environment, connection), callbackUrl, {
          state,
          nonce: attempt.nonce,
          codeVerifier: this.options.connections.openVerifier(environment, attempt.id, attempt.code_verifier!),
        });
      } catch (error) {
        if (error instanceof OidcError) throw new SignInRefused(error.reason === 'idp_error' ? 'access_denied' : error.reason, error.message);
        throw error;
      }
      if (appleName) profile = { ...profile, firstName: profile.firstName ?? appleName.firstName, lastName: profile.lastName ?? appleName.lastName };
      // A verified email proves the address only where the operator let this IdP speak: a
      // connection that lists domains vouches for those alone (an IdP administrator can give any
      // user any address, and a squatted account would later pull its owner into it). A social
      // connection trusts the flag only from providers known to verify, or when the operator says so.
      return this.account(environment, connection, { ...profile, emailTrusted: profile.emailVerified && vouchedFor(connection, profile.email) }, attempt.link_user_id);
    });
  }

  async samlAcs(connectionId: string, body: { SAMLResponse?: string; RelayState?: string }): Promise<Redirect> {
    const { environment, connection } = await this.callbackConnection(connectionId, 'saml');
    if (connection.type !== 'saml') throw new Error('unreachable');
    if (!body.SAMLResponse) throw apiError('invalid_request', 'The POST carries no SAMLResponse.', { fields: ['SAMLResponse'] });
    const now = this.options.now();
    let attempt: q.AttemptRow | undefined;
    let redirectUrl: string;
    const found = body.RelayState ? await q.findAttemptByState(this.db, environment.id, connection.id, sha256Hex(body.RelayState)) : undefined;
    if (found && found.saml_request_id !== null) {
      attempt = found;
      redirectUrl = attempt.redirect_url;
    } else if (body.RelayState && !connection.config.allowIdpInitiated) {
      throw apiError('invalid_request', INVALID_STATE, { fields: ['RelayState'] });
    } else {
      // IdP-initiated, with or without a RelayState of the IdP's own (Okta's and Entra's "default
      // RelayState"): one that names no start of ours is not ours to read, and the assertion must
      // then be unsolicited, remembered once (acceptSamlResponse), like one posted without any.
      if (!connection.config.allowIdpInitiated || !connection.config.idpInitiatedRedirectUrl) {
        throw apiError('invalid_request', 'This connection does not accept sign-ins started at the identity provider; start the sign-in from the application.');
      }
      // Checked again now, not only when saved: the origin lock may have changed since (a domain
      // given up can be someone else's by now, and the token must not travel there).
      redirectUrl = validateRedirectUrl(environment, connection.config.idpInitiatedRedirectUrl).href;
    }
    const ledger: SamlReplayLedger = {
      consumeRequest: (requestId) => q.consumeSamlRequest(this.db, environment.id, connection.id, requestId, this.options.now()),
      rememberAssertion: (assertionId, expiresAt) => q.rememberAssertion(this.db, environment.id, connection.id, assertionId, expiresAt, this.options.now()),
    };
    const urls = endpoints(this.options.baseUrl, connection.id);
    // An IdP-initiated sign-in gets an attempt of its own to carry the handoff token.
    const target = attempt ?? { id: newId('ssoa', environment.id), redirect_url: redirectUrl, unsolicited: true };
    const { acceptSamlResponse, SamlResponseError } = await samlCore();
    return this.finish(environment, target, async () => {
      let assertion;
      try {
        assertion = await acceptSamlResponse({
          samlResponse: body.SAMLResponse!,
          idp: connection.config,
          sp: urls,
          allowIdpInitiated: connection.config.allowIdpInitiated,
          expectedRequestId: attempt?.saml_request_id ?? null,
          ledger,
        });
      } catch (error) {
        if (error instanceof SamlResponseError) throw new SignInRefused(error.reason === 'idp_error' ? 'access_denied' : error.reason, error.message);
        throw error;
      }
      if ('unsolicited' in target) {
        await q.insertAttempt(this.db, environment.id, {
          id: target.id,
          connection_id: connection.id,
          state_hash: sha256Hex(newSecret('', 32)),
          redirect_url: redirectUrl,
          created_at: now,
          expires_at: now,
          consumed_at: now,
        });
      }
      const domainOk = assertion.email !== null && connection.domains.includes(emailDomain(assertion.email));
      return this.account(environment, connection, {
        subject: assertion.subject,
        email: assertion.email,
        emailVerified: false,
        emailTrusted: domainOk,
        firstName: firstOf(assertion.attributes, ['givenName', 'firstName', `${WS_CLAIMS}/givenname`]),
        lastName: firstOf(assertion.attributes, ['surname', 'lastName', `${WS_CLAIMS}/surname`]),
      }, attempt?.link_user_id ?? null);
    });
  }

  /** Runs the protocol step; success issues the handoff token, a refusal goes back as error=…. */
  private async finish(environment: Environment, attempt: { id: string; redirect_url: string }, step: () => Promise<string | HeldLink>): Promise<Redirect> {
    try {
      const userId = await step();
      const token = newSecret('', 32);
      const expiresAt = this.options.now() + HANDOFF_TTL_MS;
      // A link's token only completes it for the user who started it (identity-service.ts).
      if (typeof userId !== 'string') await holdLink(this.db, environment.id, attempt.id, { ...userId, tokenHash: sha256Hex(token), expiresAt });
      else await q.setHandoff(this.db, environment.id, attempt.id, userId, sha256Hex(token), expiresAt);
      return { location: linkWithToken(new URL(attempt.redirect_url), token) };
    } catch (error) {
      if (error instanceof SignInRefused) return { location: withError(attempt.redirect_url, error.code, error.message) };
      if (error instanceof ApiError && error.statusCode < 500) return { location: withError(attempt.redirect_url, error.code, error.message) };
      throw error;
    }
  }

  /**
   * The linking rule (DESIGN "SSO", docs/sso.md): a known (connection, subject) is its user; a first
   * sign-in whose email belongs to an existing user links only when the email's domain is one the
   * operator listed on the connection and (OIDC) the IdP says the email is verified; a new person
   * becomes a user only with a trusted email, under the sign-up rules.
   */
  private async account(
    environment: Environment,
    connection: Connection,
    profile: OidcProfile & { emailTrusted: boolean },
    linkUserId: string | null = null,
  ): Promise<string | HeldLink> {
    const now = this.options.now();
    const email = profile.email ? normalizeEmail(profile.email) : null;
    const known = await q.findIdentity(this.db, environment.id, connection.id, profile.subject);
    if (linkUserId) return this.options.identities.holdable(connection, known, linkUserId, { subject: profile.subject, email, emailTrusted: profile.emailTrusted });
    if (known) {
      const user = await this.options.identity.findUser(this.db, environment, known.user_id);
      if (user) {
        await q.touchIdentity(this.db, environment.id, connection.id, profile.subject, email, now, profile.emailTrusted);
        if (email) await this.proveAddress(environment, user, email, profile.emailTrusted);
        return user.id;
      }
      // The user was deleted: the identity goes with them; this sign-in starts afresh.
      await q.deleteIdentity(this.db, environment.id, connection.id, profile.subject);
    }
    if (!email) throw new SignInRefused('email_missing', 'The identity provider sent no email address for this account; configure it to release the email claim or attribute.');
    // An address this sign-in cannot vouch for gets one answer whether or not an account has it:
    // anyone who can put an unverified address on an IdP account would otherwise learn which
    // addresses have accounts here (account enumeration), one round trip per guess. The exception
    // is a social provider nobody vouches for (generic, without trustEmailVerified; OAuth 2.0
    // without an emailVerified field): DESIGN lets it create an unverified account, and never link.
    const social = isSocial(connection);
    const unvouched = social && !vouchesForEmail(connection);
    if (!profile.emailTrusted && !unvouched) {
      throw new SignInRefused(
        'email_not_verified',
        connection.type !== 'saml' && !profile.emailVerified
          ? 'The identity provider has not verified this email address, so this sign-in cannot be used with it. Verify it at the provider, or sign in with your usual method.'
          : `The email domain is not one of this connection's domains (${connection.domains.join(', ') || 'none'}), so this sign-in cannot be used with it. Sign in with your usual method.`,
      );
    }
    const domainListed = connection.domains.includes(emailDomain(email));
    const existing = await this.options.identity.findUserByEmail(this.db, environment, email);
    if (existing) {
      // Enterprise: the address is proven, but only a connection that lists the domain may link to an
      // account made some other way. Social: only providers known to verify emails link
      // (DESIGN "Linking by email on social connections").
      if (social ? !profile.emailTrusted : !domainListed) {
        throw new SignInRefused(
          'account_exists',
          social
            ? 'An account with this email already exists and this provider cannot prove it owns it. Sign in with your usual method, then connect this account from your profile.'
            : 'An account with this email already exists and this connection does not speak for its domain. Sign in with your usual method.',
        );
      }
      const linked = await this.bind(environment, connection, profile.subject, existing.id, email, profile.emailTrusted, now);
      if (linked === existing.id) await this.proveAddress(environment, existing, email, profile.emailTrusted);
      return linked;
    }
    if (!environment.settings.signUp) throw new SignInRefused('method_disabled', 'Sign-up is disabled for this environment, so this sign-in cannot create an account.');
    const user = await this.options.identity.createUser(environment, {
      email,
      emailVerified: profile.emailTrusted,
      ...(profile.firstName ? { firstName: profile.firstName } : {}),
      ...(profile.lastName ? { lastName: profile.lastName } : {}),
    });
    return this.bind(environment, connection, profile.subject, user.id, email, profile.emailTrusted, now);
  }

  /** Records the identity; when a racing sign-in of the same subject got there first, its user wins. */
  private async bind(environment: Environment, connection: Connection, subject: string, userId: string, email: string, trusted: boolean, now: number): Promise<string> {
    return (await this.options.identities.record(environment, connection, { subject, userId, email, emailTrusted: trusted, now })).userId;
  }

  /**
   * A verified email from the IdP (OIDC email_verified; SAML at a domain the operator listed) proves
   * the address, as an emailed link does (DESIGN "Identity"), when it is still the user's address.
   */
  private async proveAddress(environment: Environment, user: { id: string; email_key: string; email_verified: number }, email: string, trusted: boolean) {
    if (trusted && user.email_verified !== 1 && user.email_key === emailKey(email)) await this.options.identity.markEmailVerified(this.db, environment, user.id);
  }

  /**
   * The user that the token SSO returned to redirectUrl was issued for, consuming it (auth/sso.ts
   * then opens the door).
   */
  async redeem(environment: Environment, token: string): Promise<{ id: string; email: string }> {
    requireSso(environment);
    const row = await q.consumeHandoff(this.db, environment.id, sha256Hex(token), this.options.now());
    // The owner's first proof of the address may have dropped the identity this token was issued
    // for (a squatter's): the token goes with it.
    const linked = row?.user_id ? await q.hasIdentityAt(this.db, environment.id, row.connection_id, row.user_id) : false;
    const user = linked ? await this.options.identity.findUser(this.db, environment, row!.user_id!) : undefined;
    if (!user) throw apiError('invalid_credentials', 'This sign-in token is invalid, expired or already used. Start the sign-in again.');
    return { id: user.id, email: user.email };
  }

  /** For GET /v1/environment: names, ids and domains, nothing secret. */
  async publicList(environment: Environment): Promise<{ id: string; name: string; type: Connection['type']; domains: string[]; provider: string }[]> {
    const list = environment.settings.authMethods.sso ? await this.options.connections.list(environment) : [];
    return list.map((c) => ({ id: c.id, name: c.name, type: c.type, domains: c.domains, provider: providerOf(c) }));
  }
}
