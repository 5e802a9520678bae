/**
 * Microsoft's identity platform cannot be reached from tests, so this stands in for it at its real
 * address: a fetch that answers https://login.microsoftonline.com/common/… (discovery with the
 * `{tenantid}` issuer template, the common JWKS, the token endpoint) and an authorize step the test
 * walks in place of the browser. The preset's code then runs openid-client's own Entra ID path
 * (the issuer of each token is the template filled with that token's `tid`), which it does only for
 * that origin. ID tokens carry Entra's claim shape: tenant issuer, `tid`, `oid`, `preferred_username`,
 * and `email` / `xms_edov` only when the test says so.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

const ORIGIN = 'https://login.microsoftonline.com';

export interface EntraAccount {
  /** The pairwise subject Entra issues per application. */
  sub: string;
  tid: string;
  preferred_username: string;
  name?: string;
  /** Present only when the tenant releases the optional claim. */
  email?: string;
  /** Optional claim: the tenant has verified the email's domain. */
  xms_edov?: boolean;
  /** Tests only: the tenant named in `iss`, when it should differ from `tid`. */
  issuerTenant?: string;
}

export async function startMicrosoftStandin(client: { clientId: string; clientSecret: string }) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'entra-key-1';
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { account: EntraAccount; challenge: string; redirectUri: string; nonce: string }>();
  let next: EntraAccount | null = null;

  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  const idToken = (account: EntraAccount, nonce: string) => {
    const { issuerTenant, ...claims } = account;
    return new SignJWT({ ...claims, nonce, oid: randomUUID(), ver: '2.0' })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(`${ORIGIN}/${issuerTenant ?? account.tid}/v2.0`)
      .setAudience(client.clientId)
      .setIssuedAt()
      .setNotBefore('0s')
      .setExpirationTime('1h')
      .sign(privateKey);
  };

  /** openid-client's customFetch: only Microsoft's origin is answered. */
  const fetch = async (url: string, init: { method: string; headers: Record<string, string>; body?: unknown }): Promise<Response> => {
    const { origin, pathname } = new URL(url);
    // Every OIDC connection of the app goes through here: other IdPs are reached for real.
    if (origin !== ORIGIN) return globalThis.fetch(url, init as RequestInit);
    if (pathname === '/common/v2.0/.well-known/openid-configuration') {
      return json(200, {
        issuer: `${ORIGIN}/{tenantid}/v2.0`,
        authorization_endpoint: `${ORIGIN}/common/oauth2/v2.0/authorize`,
        token_endpoint: `${ORIGIN}/common/oauth2/v2.0/token`,
        jwks_uri: `${ORIGIN}/common/discovery/v2.0/keys`,
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        response_modes_supported: ['query', 'fragment', 'form_post'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'preferred_username', 'name', 'tid', 'ver', 'email'],
        tenant_region_scope: null,
      });
    }
    if (pathname === '/common/discovery/v2.0/keys') return json(200, { keys: [jwk] });
    if (pathname === '/common/oauth2/v2.0/token' && init.method === 'POST') {
      const form = new URLSearchParams(String(init.body));
      const basic = Buffer.from((init.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const [id, secret] = basic.split(':').map(decodeURIComponent);
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (id !== client.clientId || secret !== client.clientSecret) return json(401, { error: 'invalid_client' });
      if (
        !grant ||
        form.get('grant_type') !== 'authorization_code' ||
        form.get('redirect_uri') !== grant.redirectUri ||
        createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') !== grant.challenge
      ) {
        return json(400, { error: 'invalid_grant', error_description: 'AADSTS70008: The provided authorization code or refresh token has expired or was already used.' });
      }
      return json(200, { token_type: 'Bearer', scope: 'openid profile email', expires_in: 3600, access_token: randomBytes(24).toString('hex'), id_token: await idToken(grant.account, grant.nonce) });
    }
    return json(404, { error: 'not_found' });
  };

  return {
    fetch,
    signInAs: (account: EntraAccount) => void (next = account),
    /** The person at the IdP: from the authorization URL to the callback URL with its code. */
    authorize(authorizationUrl: string): string {
      const url = new URL(authorizationUrl);
      if (url.origin + url.pathname !== `${ORIGIN}/common/oauth2/v2.0/authorize`) throw new Error(`not Microsoft's authorize endpoint: ${authorizationUrl}`);
      if (url.searchParams.get('client_id') !== client.clientId || url.searchParams.get('code_challenge_method') !== 'S256' || !next) throw new Error('bad authorization request');
      const code = randomBytes(16).toString('hex');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      codes.set(code, { account: next, challenge: url.searchParams.get('code_challenge')!, redirectUri, nonce: url.searchParams.get('nonce') ?? '' });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return back.href;
    },
  };
}
