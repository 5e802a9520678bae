import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticateRequest,
  authFromClaims,
  createGatehouseClient,
  GatehouseApiError,
  type GatehouseClaims,
  type SignedInAuth,
} from '../src/index.js';
import { startGatehouse, type Gatehouse } from './helpers/gatehouse.js';

const base: GatehouseClaims = { iss: 'https://gh.test/v1/environments/env_1', sub: 'user_1', sid: 'sess_1', iat: 0, nbf: 0, exp: 1, jti: 'j' };
const withFva = (fva: [number, number], extra: Partial<GatehouseClaims> = {}) => authFromClaims({ ...base, fva, ...extra });

describe("has({reverification}) reads the token's fva as Clerk does", () => {
  it.each([
    // [fva, check, expected]
    [[0, -1], 'strict', true], // no second factor: the first counts
    [[9, -1], 'strict', true],
    [[10, -1], 'strict', false],
    [[59, -1], 'moderate', true],
    [[60, -1], 'moderate', false],
    [[1439, -1], 'lax', true],
    [[1440, -1], 'lax', false],
    [[0, 30], 'strict', false], // with a second factor, `strict` asks it
    [[30, 5], 'strict', true],
    [[30, 5], 'strict_mfa', false], // both factors
    [[5, 5], 'strict_mfa', true],
    [[5, 30], { level: 'first_factor', afterMinutes: 10 }, true],
    [[30, 5], { level: 'first_factor', afterMinutes: 10 }, false],
    [[30, 5], { level: 'second_factor', afterMinutes: 10 }, true],
    [[5, 30], { level: 'multi_factor', afterMinutes: 60 }, true],
    [[5, 30], { level: 'multi_factor', afterMinutes: 20 }, false],
    [[-1, -1], { level: 'first_factor', afterMinutes: 10 }, false],
    [[0, 0], { level: 'first_factor', afterMinutes: 0 }, false],
    [[0, 0], 'very_strict', false], // an unknown preset is never satisfied
  ] as const)('fva %j, %j → %s', (fva, reverification, expected) => {
    expect(withFva([...fva] as [number, number]).has({ reverification } as never)).toBe(expected);
  });

  it('without fva nothing is recent; with a permission, both must hold', () => {
    expect(authFromClaims(base).has({ reverification: 'lax' })).toBe(false);
    expect(authFromClaims(base).factorVerificationAge).toBeNull();
    const member = withFva([1, -1], { org_id: 'org_1', org_role: 'admin', org_permissions: ['org:manage'] });
    expect(member.has({ permission: 'org:manage', reverification: 'strict' })).toBe(true);
    expect(member.has({ permission: 'org:billing', reverification: 'strict' })).toBe(false);
    expect(withFva([30, -1], { org_id: 'org_1', org_permissions: ['org:manage'] }).has({ permission: 'org:manage', reverification: 'strict' })).toBe(false);
    expect(member.has({ permission: 'org:manage' })).toBe(true);
  });

  it('an impersonated session exposes its actor and is never recently verified', () => {
    const auth = withFva([0, -1], { act: { sub: 'support:ada' }, amr: ['actor'] });
    expect(auth.actor).toEqual({ sub: 'support:ada' });
    expect(auth.has({ reverification: 'lax' })).toBe(false);
    expect(withFva([0, -1]).actor).toBeNull();
  });
});

describe('actor tokens through the admin client, against a running Gatehouse', () => {
  let gh: Gatehouse;
  beforeAll(async () => {
    gh = await startGatehouse();
  });
  afterAll(() => gh.close());

  it('actorTokens.create mints a token whose session carries act, amr ["actor"], and that authenticateRequest reports', async () => {
    const user = await gh.signUp();
    const client = createGatehouseClient({ secretKey: gh.development.secretKey, baseUrl: gh.baseUrl });
    const minted = await client.actorTokens.create({ userId: user.userId, actor: { sub: 'support:ada' } });
    expect(minted.id).toMatch(/^act_/);
    expect(minted.url).toBe(`${gh.baseUrl}/hosted/${gh.development.id}/actor?token=${encodeURIComponent(minted.token)}`);
    const redeemed = await fetch(`${gh.baseUrl}/v1/auth/actor-token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gh.development.publishableKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: minted.token }),
    });
    expect(redeemed.status).toBe(200);
    const { session } = (await redeemed.json()) as { session: { accessToken: string } };
    const auth = (await authenticateRequest(new Request('http://app.test/', { headers: { authorization: `Bearer ${session.accessToken}` } }), {
      issuer: gh.development.issuer,
    })) as SignedInAuth;
    expect(auth.isSignedIn).toBe(true);
    expect(auth.userId).toBe(user.userId);
    expect(auth.actor).toEqual({ sub: 'support:ada' });
    expect(auth.claims.amr).toEqual(['actor']);
    expect(auth.has({ reverification: 'strict' })).toBe(false);

    // The user's own fresh session is recently verified.
    const own = (await authenticateRequest(new Request('http://app.test/', { headers: { authorization: `Bearer ${user.accessToken}` } }), {
      issuer: gh.development.issuer,
    })) as SignedInAuth;
    expect(own.actor).toBeNull();
    expect(own.factorVerificationAge).toEqual([0, -1]);
    expect(own.has({ reverification: 'strict' })).toBe(true);
  });

  it('refuses expiresInSeconds above 3600 with a 400', async () => {
    const user = await gh.signUp();
    const client = createGatehouseClient({ secretKey: gh.development.secretKey, baseUrl: gh.baseUrl });
    const error = await client.actorTokens.create({ userId: user.userId, actor: { sub: 'x' }, expiresInSeconds: 3601 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatehouseApiError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
  });
});
