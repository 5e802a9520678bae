import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, me, refresh, signUp } from '../helpers/identity.js';

const clock = testClock();
const kidOf = (accessToken: string) => String(decodeJwt(accessToken).header.kid);

describe('revoking a compromised signing key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const revoke = (environmentId: string, kid: string, credential = t.platformKey) =>
    t.call({ method: 'POST', url: `/v1/platform/environments/${environmentId}/signing-keys/${kid}/revoke`, credential });
  const rotate = (environmentId: string) =>
    t.call({ method: 'POST', url: `/v1/platform/environments/${environmentId}/signing-keys/rotate`, credential: t.platformKey });
  const jwksKids = async (environmentId: string) =>
    (json(await t.call({ method: 'GET', url: `/v1/environments/${environmentId}/.well-known/jwks.json` })).keys as Array<{ kid: string }>).map(
      (k) => k.kid,
    );

  it('compromised key: revoking the active key unpublishes it, refuses its tokens at once, and a new key signs; sessions refresh', async () => {
    const environment = (await t.createProject('compromised')).development;
    const user = await signUp(t, { environment });
    const leaked = kidOf(user.accessToken);
    expect((await me(t, user.accessToken)).statusCode).toBe(200); // verified and cached before the revocation

    const res = await revoke(environment.id, leaked);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({ kid: leaked, state: 'retired', publishUntil: clock.now() });
    expect(await jwksKids(environment.id)).not.toContain(leaked);

    const refused = await me(t, user.accessToken);
    expect(refused.statusCode).toBe(401);
    expect(json(refused).error.message).toContain('revoked');

    // The session itself lives on: a refresh gets a token signed by the new key, which verifies.
    const next = json(await refresh(t, user.refreshToken, environment)).session;
    expect(kidOf(next.accessToken)).not.toBe(leaked);
    expect(await jwksKids(environment.id)).toContain(kidOf(next.accessToken));
    expect((await me(t, next.accessToken)).statusCode).toBe(200);
    expect(kidOf((await signUp(t, { environment })).accessToken)).toBe(kidOf(next.accessToken));

    // Revoking again changes nothing.
    expect(json(await revoke(environment.id, leaked))).toEqual(json(res));
  });

  it('revoking a pending key drops it, and the active key signs on without a successor', async () => {
    const environment = (await t.createProject('pending')).development;
    const user = await signUp(t, { environment });
    const active = kidOf(user.accessToken);
    const pending = json(await rotate(environment.id)).kid as string;
    expect((await revoke(environment.id, pending)).statusCode).toBe(200);
    expect(await jwksKids(environment.id)).toEqual([active]);
    clock.advance(3_600_000);
    const later = json(await refresh(t, user.refreshToken, environment)).session;
    expect(kidOf(later.accessToken)).toBe(active);
  });

  it('revoking a retired key still published withdraws it from the JWKS', async () => {
    const environment = (await t.createProject('retired')).development;
    const user = await signUp(t, { environment });
    const old = kidOf(user.accessToken);
    const rotated = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${environment.id}/signing-keys/rotate`,
      credential: t.platformKey,
      payload: { immediate: true },
    });
    expect(await jwksKids(environment.id)).toContain(old);
    expect((await me(t, user.accessToken)).statusCode).toBe(200);
    expect((await revoke(environment.id, old)).statusCode).toBe(200);
    expect(await jwksKids(environment.id)).toEqual([json(rotated).kid]);
    expect((await me(t, user.accessToken)).statusCode).toBe(401);
  });

  it('answers 404 for a key of another environment or an unknown kid, and takes the platform key only', async () => {
    const a = (await t.createProject('a')).development;
    const b = (await t.createProject('b')).development;
    const kid = kidOf((await signUp(t, { environment: a })).accessToken);
    expect((await revoke(b.id, kid)).statusCode).toBe(404);
    expect((await revoke(a.id, 'key_00000000000000000000000000')).statusCode).toBe(404);
    expect((await revoke(a.id, kid, a.secretKey)).statusCode).toBe(403);
    expect(await jwksKids(a.id)).toContain(kid);
  });
});
