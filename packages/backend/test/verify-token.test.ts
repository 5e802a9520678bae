import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenVerificationError, verifyToken } from '../src/index.js';
import { startGatehouse, type Gatehouse } from './helpers/gatehouse.js';

async function refusal(promise: Promise<unknown>): Promise<TokenVerificationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TokenVerificationError);
  return error as TokenVerificationError;
}

describe('verifyToken against a running Gatehouse', () => {
  let gh: Gatehouse;
  beforeAll(async () => {
    gh = await startGatehouse();
  });
  afterAll(() => gh.close());

  it('verifies a signed-in user’s token with the keys the issuer publishes, and returns its claims', async () => {
    const user = await gh.signUp();
    const claims = await verifyToken(user.accessToken, { issuer: gh.development.issuer });
    expect(claims.sub).toBe(user.userId);
    expect(claims.iss).toBe(gh.development.issuer);
    expect(typeof claims.sid).toBe('string');
    expect(claims.exp - claims.iat).toBe(300);
    expect(gh.jwksFetches(gh.development)).toBe(1);

    // The key is cached: more tokens, no more fetches.
    const other = await gh.signUp();
    await verifyToken(other.accessToken, { issuer: gh.development.issuer });
    await verifyToken(user.accessToken, { issuer: gh.development.issuer });
    expect(gh.jwksFetches(gh.development)).toBe(1);
  });

  it.each(['ES256', 'EdDSA', 'RS256'] as const)('verifies %s tokens, the algorithm the environment signs with', async (alg) => {
    const environment = await gh.newEnvironment();
    await gh.setSettings(environment, { tokenAlgorithm: alg });
    const user = await gh.signUp(environment);
    const [header] = user.accessToken.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString()).alg).toBe(alg);
    const claims = await verifyToken(user.accessToken, { issuer: environment.issuer });
    expect(claims.sub).toBe(user.userId);
  });

  it('picks up a rotated key at once, with one fetch', async () => {
    const environment = await gh.newEnvironment();
    const before = await gh.signUp(environment);
    await verifyToken(before.accessToken, { issuer: environment.issuer });
    expect(gh.jwksFetches(environment)).toBe(1);
    await gh.rotateKeys(environment);
    const after = await gh.signUp(environment);
    await verifyToken(after.accessToken, { issuer: environment.issuer });
    expect(gh.jwksFetches(environment)).toBe(2);
    // The old key stays published, so tokens it signed still verify, from the cache.
    await verifyToken(before.accessToken, { issuer: environment.issuer });
    expect(gh.jwksFetches(environment)).toBe(2);
  });

  it('networkless with jwtKey: the JWK or the PEM of each algorithm, no fetch at all', async () => {
    const { createPublicKey } = await import('node:crypto');
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      await gh.setSettings(gh.production, { tokenAlgorithm: alg });
      const user = await gh.signUp(gh.production);
      const { keys } = await gh.jwks(gh.production);
      const jwk = keys.find((k) => k.alg === alg)!;
      const pem = createPublicKey({ key: jwk as any, format: 'jwk' })
        .export({ format: 'pem', type: 'spki' })
        .toString();
      const before = gh.requests.length;
      // A jwksUrl that would fail proves nothing is fetched.
      const options = { issuer: gh.production.issuer, jwksUrl: 'http://127.0.0.1:1/nothing-here' };
      expect((await verifyToken(user.accessToken, { ...options, jwtKey: jwk })).sub).toBe(user.userId);
      expect((await verifyToken(user.accessToken, { ...options, jwtKey: pem })).sub).toBe(user.userId);
      expect((await verifyToken(user.accessToken, { ...options, jwtKey: JSON.stringify(jwk) })).sub).toBe(user.userId);
      expect(gh.requests.length).toBe(before);
    }
  });

  it('networkless: a rotated key is jwk-kid-mismatch, with a message saying to update jwtKey', async () => {
    const { keys } = await gh.jwks(gh.development);
    const before = await gh.signUp();
    const current = keys.find((k) => JSON.parse(Buffer.from(before.accessToken.split('.')[0]!, 'base64url').toString()).kid === k.kid)!;
    await gh.rotateKeys(gh.development);
    const after = await gh.signUp();
    const error = await refusal(verifyToken(after.accessToken, { issuer: gh.development.issuer, jwtKey: current }));
    expect(error.reason).toBe('jwk-kid-mismatch');
    expect(error.message).toMatch(/update jwtKey/);
  });

  it('azp: a token from a listed origin passes authorizedParties; another origin is authorized-party-invalid', async () => {
    const environment = await gh.newEnvironment();
    await gh.setSettings(environment, { callbackOrigins: ['https://app.example.test'] });
    const user = await gh.signUp(environment, { origin: 'https://app.example.test' });
    const claims = await verifyToken(user.accessToken, { issuer: environment.issuer, authorizedParties: ['https://app.example.test'] });
    expect(claims.azp).toBe('https://app.example.test');
    const error = await refusal(
      verifyToken(user.accessToken, { issuer: environment.issuer, authorizedParties: ['https://other.example.test'] }),
    );
    expect(error.reason).toBe('authorized-party-invalid');
    expect(error.message).toContain('https://app.example.test');
    // A token without azp (issued to a backend) is not refused by authorizedParties.
    const serverSide = await gh.signUp(environment);
    await verifyToken(serverSide.accessToken, { issuer: environment.issuer, authorizedParties: ['https://other.example.test'] });
  });
});

describe('verifyToken when the keys cannot be read', () => {
  let gh: Gatehouse;
  beforeAll(async () => {
    gh = await startGatehouse();
  });
  afterAll(() => gh.close());

  it('a JWKS fetch that times out is jwks-unavailable; the next verification is refused at once for 30 s, then tries again', async () => {
    const user = await gh.signUp();
    gh.hang = true;
    const error = await refusal(verifyToken(user.accessToken, { issuer: gh.development.issuer, jwksTimeoutMs: 200 }));
    expect(error.reason).toBe('jwks-unavailable');
    expect(error.message).toMatch(/no answer within 200 ms/);
    gh.hang = false;
    // Only Date is faked, so the 30 s backoff after the failure can pass without waiting.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now());
      const during = await refusal(verifyToken(user.accessToken, { issuer: gh.development.issuer }));
      expect(during.reason).toBe('jwks-unavailable');
      expect(during.message).toMatch(/retried at most every 30 s/);
      vi.advanceTimersByTime(30_000);
      expect((await verifyToken(user.accessToken, { issuer: gh.development.issuer })).sub).toBe(user.userId);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an unreachable issuer is jwks-unavailable, never a crash', async () => {
    const user = await gh.signUp();
    const error = await refusal(verifyToken(user.accessToken, { issuer: gh.development.issuer, jwksUrl: 'http://127.0.0.1:1/jwks.json' }));
    expect(error.reason).toBe('jwks-unavailable');
    expect(error.message).toMatch(/jwtKey/);
  });

  it('an issuer whose JWKS answers 404 is jwks-unavailable', async () => {
    const user = await gh.signUp();
    const error = await refusal(verifyToken(user.accessToken, { issuer: gh.development.issuer, jwksUrl: `${gh.baseUrl}/v1/nothing` }));
    expect(error.reason).toBe('jwks-unavailable');
    expect(error.message).toMatch(/HTTP 404/);
  });
});
