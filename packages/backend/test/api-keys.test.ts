import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerificationError, authenticateRequest, createGatehouseClient, verifyApiKey } from '../src/index.js';
import { startGatehouse, type Gatehouse } from './helpers/gatehouse.js';

async function refusal(promise: Promise<unknown>): Promise<ApiKeyVerificationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiKeyVerificationError);
  return error as ApiKeyVerificationError;
}

const bearer = (token: string) => new Request('http://app.test/api', { headers: { authorization: `Bearer ${token}` } });

describe('API keys with @gatehouse/backend, against a running Gatehouse', () => {
  let gh: Gatehouse;
  let client: ReturnType<typeof createGatehouseClient>;
  let userId: string;
  beforeAll(async () => {
    gh = await startGatehouse();
    client = createGatehouseClient({ secretKey: gh.development.secretKey, baseUrl: gh.baseUrl });
    userId = (await gh.signUp()).userId;
  });
  afterAll(() => gh.close());

  const verifies = () => gh.requests.filter((r) => r.path === '/v1/api-keys/verify').length;

  it('the admin client creates, lists, verifies and revokes keys', async () => {
    const { apiKey, secret } = await client.apiKeys.create({ subject: userId, name: 'admin', scopes: ['reports:read'] });
    expect(secret).toMatch(/^gh_ak_/);
    const page = await client.apiKeys.list({ subject: userId });
    expect(page.data.map((k) => k.id)).toContain(apiKey.id);
    expect(await client.apiKeys.verify(secret)).toEqual({ id: apiKey.id, subject: userId, scopes: ['reports:read'], expiresAt: null });
    expect(await client.apiKeys.revoke(apiKey.id)).toEqual({ id: apiKey.id, deleted: true });
    await expect(client.apiKeys.verify(secret)).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('verifyApiKey answers from its cache within cacheTtlMs, and never remembers a refusal', async () => {
    const { apiKey, secret } = await client.apiKeys.create({ subject: userId, name: 'cached' });
    const options = { secretKey: gh.development.secretKey, baseUrl: gh.baseUrl, cacheTtlMs: 400 };
    const before = verifies();
    expect(await verifyApiKey(secret, options)).toEqual({ id: apiKey.id, subject: userId, scopes: [], expiresAt: null });
    await Promise.all([verifyApiKey(secret, options), verifyApiKey(secret, options)]);
    expect(verifies() - before).toBe(1);

    await client.apiKeys.revoke(apiKey.id);
    // The server refuses at once; this process's copy passes until its TTL is out (README: "the SDK cache").
    expect((await verifyApiKey(secret, options)).id).toBe(apiKey.id);
    expect((await refusal(verifyApiKey(secret, { ...options, cacheTtlMs: 0 }))).reason).toBe('api-key-invalid');
    await new Promise((r) => setTimeout(r, 450));
    expect((await refusal(verifyApiKey(secret, options))).reason).toBe('api-key-invalid');
    const after = verifies();
    expect((await refusal(verifyApiKey(secret, options))).reason).toBe('api-key-invalid');
    expect(verifies() - after).toBe(1);
  });

  it('with cacheTtlMs 0, a revocation is seen at the next call', async () => {
    const { apiKey, secret } = await client.apiKeys.create({ subject: userId, name: 'uncached' });
    const options = { secretKey: gh.development.secretKey, baseUrl: gh.baseUrl, cacheTtlMs: 0 };
    expect((await verifyApiKey(secret, options)).id).toBe(apiKey.id);
    await client.apiKeys.revoke(apiKey.id);
    expect((await refusal(verifyApiKey(secret, options))).reason).toBe('api-key-invalid');
  });

  it('a Gatehouse that cannot be reached is api-key-unavailable, not a refusal of the key', async () => {
    const error = await refusal(
      verifyApiKey('gh_ak_' + 'A'.repeat(43), { secretKey: gh.development.secretKey, baseUrl: 'http://127.0.0.1:9' }),
    );
    expect(error.reason).toBe('api-key-unavailable');
  });

  it('authenticateRequest accepts an API key only when asked, and says tokenType', async () => {
    const { secret } = await client.apiKeys.create({ subject: userId, name: 'request', scopes: ['reports:read'] });
    const byDefault = await authenticateRequest(bearer(secret), { issuer: gh.development.issuer });
    expect(byDefault).toMatchObject({ isSignedIn: false, isAuthenticated: false, tokenType: 'api_key', reason: 'token-type-not-accepted' });

    const auth = await authenticateRequest(bearer(secret), {
      issuer: gh.development.issuer,
      acceptsToken: ['session_token', 'api_key', 'm2m_token'],
      secretKey: gh.development.secretKey,
    });
    expect(auth).toMatchObject({
      isAuthenticated: true,
      isSignedIn: false,
      tokenType: 'api_key',
      subject: userId,
      userId,
      orgId: null,
      scopes: ['reports:read'],
    });
    if (auth.tokenType !== 'api_key' || !auth.isAuthenticated) throw new Error('unreachable');
    expect(auth.hasScope('reports:read')).toBe(true);
    expect(auth.hasScope('reports:write')).toBe(false);

    const session = (await gh.signUp()).accessToken;
    const signedIn = await authenticateRequest(bearer(session), {
      issuer: gh.development.issuer,
      acceptsToken: ['session_token', 'api_key'],
      secretKey: gh.development.secretKey,
    });
    expect(signedIn).toMatchObject({ isSignedIn: true, isAuthenticated: true, tokenType: 'session_token' });
    const onlyKeys = await authenticateRequest(bearer(session), {
      issuer: gh.development.issuer,
      acceptsToken: ['api_key'],
      secretKey: gh.development.secretKey,
    });
    expect(onlyKeys).toMatchObject({ isAuthenticated: false, reason: 'token-type-not-accepted', tokenType: 'session_token' });
  });
});
