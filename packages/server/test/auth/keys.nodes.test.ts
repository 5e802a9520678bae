import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import { decodeJwt, json, me, refresh, signUp } from '../helpers/identity.js';
import { REDIS_SUITE, REDIS_URL } from '../helpers/redis.js';
import { startRelayedNodes, type RelayedNodes } from '../helpers/relay.js';
import { within } from '../helpers/wait.js';

const kidOf = (accessToken: string) => String(decodeJwt(accessToken).header.kid);

describe.skipIf(!REDIS_URL)(`signing-key rotation across nodes ${REDIS_SUITE}`, () => {
  const platformKey = newSecret('plk_');
  const instanceSecret = newSecret('', 48);
  let nodes: RelayedNodes;
  beforeAll(async () => {
    nodes = await startRelayedNodes({ platformKey, instanceSecret });
  });
  afterAll(() => nodes?.close());

  it('an emergency rotation on one node stops the exposed key signing on the others as soon as the change arrives', async () => {
    const { a, b } = nodes;
    const environment = a.project.development;
    // B signs with the current key and caches it (it would otherwise trust that view for 30 s).
    const before = kidOf((await signUp(b, { environment })).accessToken);
    expect(kidOf((await signUp(b, { environment })).accessToken)).toBe(before);

    const rotated = await a.call({
      method: 'POST',
      url: `/v1/platform/environments/${environment.id}/signing-keys/rotate`,
      credential: platformKey,
      payload: { immediate: true },
    });
    expect(rotated.statusCode).toBe(201);
    const fresh = (rotated.json() as { kid: string }).kid;
    expect(fresh).not.toBe(before);

    expect(kidOf((await signUp(a, { environment })).accessToken)).toBe(fresh);
    // B is probed with refreshes (a signature, no password hash), so the bound is the change's
    // travel, not the probe's: well under B's 30 s of trust in its own view.
    let refreshToken = (await signUp(b, { environment })).refreshToken;
    const kidSignedByB = async () => {
      const refreshed = await refresh(b, refreshToken, environment);
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      const session = json(refreshed).session as { accessToken: string; refreshToken: string };
      refreshToken = session.refreshToken;
      return kidOf(session.accessToken);
    };
    await within(5000, async () => (await kidSignedByB()) === fresh);
  });
  it('a revoked key is refused by /v1/me on the other node at once, and leaves its JWKS', async () => {
    const { a, b } = nodes;
    const environment = (await a.createProject('revoked across nodes')).development;
    const user = await signUp(b, { environment });
    const leaked = kidOf(user.accessToken);
    // B has verified the token and cached its key and session.
    expect((await me(b, user.accessToken)).statusCode).toBe(200);
    expect((await me(b, user.accessToken)).statusCode).toBe(200);

    const revoked = await a.call({
      method: 'POST',
      url: `/v1/platform/environments/${environment.id}/signing-keys/${leaked}/revoke`,
      credential: platformKey,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    // Answered means announced: B, caught up before it serves a cached session, refuses at once.
    const refused = await me(b, user.accessToken);
    expect(refused.statusCode, refused.body).toBe(401);
    const jwks = await b.call({ method: 'GET', url: `/v1/environments/${environment.id}/.well-known/jwks.json` });
    expect((json(jwks).keys as Array<{ kid: string }>).map((k) => k.kid)).not.toContain(leaked);
    const next = json(await refresh(b, user.refreshToken, environment)).session as { accessToken: string };
    expect(kidOf(next.accessToken)).not.toBe(leaked);
    expect((await me(a, next.accessToken)).statusCode).toBe(200);
  });
  it('a stolen revoked key: a node that has not heard of the revocation refuses its token for a session it has not cached', async () => {
    const { a, deaf } = nodes;
    const environment = (await a.createProject('revoked, not yet heard')).development;
    // The deaf node hears no announcement: it stands for any node before the revocation reaches it.
    // It has verified a token of the key, so its own view of the keys still holds it.
    const seen = await signUp(a, { environment });
    expect((await me(deaf, seen.accessToken)).statusCode).toBe(200);
    // Any session it has not cached: an attacker with the key signs tokens for any known session id.
    const other = await signUp(a, { environment });
    const leaked = kidOf(other.accessToken);
    expect(kidOf(seen.accessToken)).toBe(leaked);

    const revoked = await a.call({
      method: 'POST',
      url: `/v1/platform/environments/${environment.id}/signing-keys/${leaked}/revoke`,
      credential: platformKey,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    const refused = await me(deaf, other.accessToken);
    expect(refused.statusCode, refused.body).toBe(401);
    expect(json(refused).error.message).toContain('revoked');
  });
});
