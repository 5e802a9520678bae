import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateRequest, createGatehouseClient, getMachineToken, TokenVerificationError, verifyToken } from '../src/index.js';
import { startGatehouse, type Gatehouse } from './helpers/gatehouse.js';

async function refusal(promise: Promise<unknown>): Promise<TokenVerificationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TokenVerificationError);
  return error as TokenVerificationError;
}

const bearer = (token: string) => new Request('http://app.test/api', { headers: { authorization: `Bearer ${token}` } });

/** A machine's token used as a user's (and the reverse), with the SDK verifying offline (node:crypto or WebCrypto). */
describe('machine tokens with @gatehouse/backend, against a running Gatehouse', () => {
  let gh: Gatehouse;
  let machineToken: string;
  let machineId: string;
  let clientSecret: string;
  beforeAll(async () => {
    gh = await startGatehouse();
    const client = createGatehouseClient({ secretKey: gh.development.secretKey, baseUrl: gh.baseUrl });
    const created = await client.machines.create({ name: 'billing', scopes: ['invoices:read', 'invoices:write'] });
    machineId = created.machine.id;
    clientSecret = created.clientSecret;
    machineToken = (await getMachineToken({ baseUrl: gh.baseUrl, clientId: machineId, clientSecret, scope: 'invoices:read' })).access_token;
  });
  afterAll(() => gh.close());

  it('a machine token used as a session token is refused by default', async () => {
    const error = await refusal(verifyToken(machineToken, { issuer: gh.development.issuer }));
    expect(error.reason).toBe('token-type-not-accepted');
    const auth = await authenticateRequest(bearer(machineToken), { issuer: gh.development.issuer });
    expect(auth).toMatchObject({ isSignedIn: false, isAuthenticated: false, tokenType: 'm2m_token', reason: 'token-type-not-accepted' });
  });

  it('verifies with acceptsToken ["m2m_token"], and a session token is refused there', async () => {
    const claims = await verifyToken(machineToken, { issuer: gh.development.issuer, acceptsToken: ['m2m_token'] });
    expect(claims).toMatchObject({ sub: machineId, scope: 'invoices:read', iss: gh.development.issuer });
    const session = (await gh.signUp()).accessToken;
    expect((await refusal(verifyToken(session, { issuer: gh.development.issuer, acceptsToken: ['m2m_token'] }))).reason).toBe(
      'token-type-not-accepted',
    );
    // Both kinds, when both are asked for.
    const either = await verifyToken(session, { issuer: gh.development.issuer, acceptsToken: ['session_token', 'm2m_token'] });
    expect(either.sid).toEqual(expect.any(String));
  });

  it('authenticateRequest says tokenType m2m_token, with the machine and its scopes', async () => {
    const auth = await authenticateRequest(bearer(machineToken), {
      issuer: gh.development.issuer,
      acceptsToken: ['session_token', 'm2m_token'],
    });
    expect(auth).toMatchObject({ isAuthenticated: true, isSignedIn: false, tokenType: 'm2m_token', machineId, scopes: ['invoices:read'] });
  });

  it('a machine token of another environment fails its issuer check', async () => {
    const other = await gh.newEnvironment();
    const error = await refusal(verifyToken(machineToken, { issuer: other.issuer, acceptsToken: ['m2m_token'] }));
    expect(error.reason).toBe('issuer-invalid');
  });

  it('a forged typ: a session token relabelled m2m+jwt fails its signature', async () => {
    const session = (await gh.signUp()).accessToken;
    const [header, payload, signature] = session.split('.') as [string, string, string];
    const relabelled = JSON.parse(Buffer.from(header, 'base64url').toString());
    relabelled.typ = 'm2m+jwt';
    const forged = `${Buffer.from(JSON.stringify(relabelled)).toString('base64url')}.${payload}.${signature}`;
    const error = await refusal(verifyToken(forged, { issuer: gh.development.issuer, acceptsToken: ['m2m_token'] }));
    expect(['signature-invalid', 'token-invalid']).toContain(error.reason);
  });

  it('a guessed client secret is refused in the error shape', async () => {
    await expect(
      getMachineToken({ baseUrl: gh.baseUrl, clientId: machineId, clientSecret: clientSecret.slice(0, -1) + 'x' }),
    ).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
  });
});
