import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKey, startIssuer, type TestIssuer } from '../../backend/test/helpers/issuer.js';
import { authenticate } from '../src/server/authenticate.js';
import { resolveConfig } from '../src/server/config.js';
import { crossSiteRefusal, schemeOf, type RequestFacts } from '../src/server/request.js';

const facts = (overrides: Partial<RequestFacts>): RequestFacts => ({
  authorization: null,
  cookie: null,
  origin: null,
  secFetchSite: null,
  secFetchDest: null,
  accept: null,
  host: 'app.example.com',
  forwardedHost: null,
  protocol: undefined,
  method: undefined,
  ...overrides,
});

describe('cross-site request forgery with the session cookie', () => {
  it('a page on another origin (another site, a sibling subdomain, another port) is refused', () => {
    for (const origin of ['https://evil.test', 'https://evil.example.com', 'https://app.example.com:8443', 'http://localhost:3001']) {
      expect(crossSiteRefusal(facts({ origin, method: 'POST' }), [])).toMatch(/cross-site request forgery/);
    }
  });

  it('look-alike origins are refused: a suffix, a prefix, userinfo', () => {
    for (const origin of ['https://app.example.com.evil.test', 'https://evilapp.example.com', 'https://app.example.com@evil.test']) {
      expect(crossSiteRefusal(facts({ origin }), [])).toBeDefined();
    }
  });

  it('a page on plain http of the same host is refused when the app is served over https', () => {
    expect(crossSiteRefusal(facts({ origin: 'http://app.example.com', method: 'POST', protocol: 'https:' }), [])).toMatch(/cross-site request forgery/);
    expect(crossSiteRefusal(facts({ origin: 'https://app.example.com', method: 'POST', protocol: 'https:' }), [])).toBeUndefined();
  });

  it('the request scheme comes from X-Forwarded-Proto, else the request URL', () => {
    expect(schemeOf('https', 'http://internal:3000/x')).toBe('https:');
    expect(schemeOf('https, http', undefined)).toBe('https:');
    expect(schemeOf(null, 'https://app.example.com/x')).toBe('https:');
    expect(schemeOf('gopher', undefined)).toBeUndefined();
  });

  it('an opaque "null" origin (sandboxed iframe, data: URL) is refused', () => {
    expect(crossSiteRefusal(facts({ origin: 'null', method: 'POST' }), [])).toBeDefined();
  });

  it('the app’s own origin passes, behind a proxy too (X-Forwarded-Host), and a listed origin passes', () => {
    expect(crossSiteRefusal(facts({ origin: 'https://app.example.com', method: 'POST' }), [])).toBeUndefined();
    expect(
      crossSiteRefusal(facts({ origin: 'https://www.example.com', host: 'internal:3000', forwardedHost: 'www.example.com' }), []),
    ).toBeUndefined();
    expect(crossSiteRefusal(facts({ origin: 'https://admin.example.com' }), ['https://admin.example.com'])).toBeUndefined();
  });

  it('without Origin: an unsafe method sent from another site (Sec-Fetch-Site) is refused; a navigation is not', () => {
    expect(crossSiteRefusal(facts({ method: 'POST', secFetchSite: 'cross-site' }), [])).toBeDefined();
    expect(crossSiteRefusal(facts({ method: 'DELETE', secFetchSite: 'same-site' }), [])).toBeDefined();
    expect(crossSiteRefusal(facts({ method: 'GET', secFetchSite: 'cross-site' }), [])).toBeUndefined();
    expect(crossSiteRefusal(facts({ method: 'POST', secFetchSite: 'same-origin' }), [])).toBeUndefined();
  });
});

describe('authenticate(): the cookie is verified, and refused cross-site; a bearer header is not ambient', () => {
  let issuer: TestIssuer;
  const key = makeKey('ES256', 'key_next');
  beforeAll(async () => {
    issuer = await startIssuer([key]);
  });
  afterAll(() => issuer.close());
  const config = () => resolveConfig({ issuer: issuer.issuer, publishableKey: 'pk_test_x', baseUrl: issuer.issuer });

  it('a valid cookie from the app’s own page is signed in', async () => {
    const auth = await authenticate(facts({ cookie: issuer.token(), origin: 'https://app.example.com', method: 'POST' }), config());
    expect(auth).toMatchObject({ isSignedIn: true, userId: 'user_test', tokenSource: 'cookie' });
  });

  it('the same cookie on a cross-site POST is signed out (origin-invalid)', async () => {
    const auth = await authenticate(facts({ cookie: issuer.token(), origin: 'https://evil.test', method: 'POST' }), config());
    expect(auth).toMatchObject({ isSignedIn: false, reason: 'origin-invalid', userId: null });
  });

  it('a bearer header is not subject to the Origin check (a page must have read the token to send it)', async () => {
    const auth = await authenticate(facts({ authorization: `Bearer ${issuer.token()}`, origin: 'https://partner.test' }), config());
    expect(auth).toMatchObject({ isSignedIn: true, tokenSource: 'header' });
  });

  it('a tampered or expired cookie is signed out with the verification reason', async () => {
    const [h, , s] = issuer.token().split('.');
    const payload = Buffer.from(JSON.stringify(issuer.claims({ sub: 'user_victim' }))).toString('base64url');
    expect(await authenticate(facts({ cookie: `${h}.${payload}.${s}` }), config())).toMatchObject({ reason: 'signature-invalid' });
    const expired = issuer.token({ exp: Math.floor(Date.now() / 1000) - 60 });
    expect(await authenticate(facts({ cookie: expired }), config())).toMatchObject({ reason: 'token-expired', tokenSource: 'cookie' });
  });

  it('pinned key (GATEHOUSE_JWT_KEY) without an issuer: a token naming an issuer outside this Gatehouse is refused, no fetch', async () => {
    const before = issuer.fetches;
    const pinned = resolveConfig({ jwtKey: key.pem, baseUrl: 'https://auth.example.com', publishableKey: 'pk_test_x' });
    const ours = issuer.token({ iss: 'https://auth.example.com/v1/environments/env_1' });
    expect(await authenticate(facts({ cookie: ours }), pinned)).toMatchObject({ isSignedIn: true });
    const foreign = issuer.token({ iss: 'https://evil.test/v1/environments/env_1' });
    expect(await authenticate(facts({ cookie: foreign }), pinned)).toMatchObject({ isSignedIn: false });
    expect(issuer.fetches).toBe(before);
  });
});
