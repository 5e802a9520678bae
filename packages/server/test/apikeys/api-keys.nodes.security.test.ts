import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import type { TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { plainUser } from '../helpers/organizations.js';
import { REDIS_SUITE, REDIS_URL } from '../helpers/redis.js';
import { startRelayedNodes, type RelayedNodes } from '../helpers/relay.js';

const ROUNDS = 30;

/** A key revoked on node A is refused by node B at once, though B had it cached. */
describe.skipIf(!REDIS_URL)(`a revoked API key on another node ${REDIS_SUITE}`, { timeout: 60_000 }, () => {
  const platformKey = newSecret('plk_');
  const instanceSecret = newSecret('', 48);
  let nodes: RelayedNodes;
  beforeAll(async () => {
    nodes = await startRelayedNodes({ platformKey, instanceSecret });
  });
  afterAll(() => nodes?.close());

  const verify = (node: TestApp, secret: string) =>
    node.call({ method: 'POST', url: '/v1/api-keys/verify', credential: nodes.a.project.development.secretKey, payload: { secret } });

  it(`is refused by the other node as soon as the revocation is answered (${ROUNDS} rounds)`, async () => {
    const { a, b } = nodes;
    const sk = a.project.development.secretKey;
    const user = await plainUser(a, undefined, 'nodes');
    let stale = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const created = json(
        await a.call({ method: 'POST', url: '/v1/api-keys', credential: sk, payload: { subject: user.id, name: `r${round}` } }),
      );
      // B verifies it twice: the second answer comes from its cache.
      expect((await verify(b, created.secret)).statusCode).toBe(200);
      expect((await verify(b, created.secret)).statusCode).toBe(200);
      const revoked = await a.call({ method: 'DELETE', url: `/v1/api-keys/${created.apiKey.id}`, credential: sk });
      expect(revoked.statusCode, revoked.body).toBe(200);
      if ((await verify(b, created.secret)).statusCode !== 401) stale++;
    }
    expect(stale).toBe(0);
  });

  it('a node that hears no announcement serves its cached copy: the cache is real, and the relay is what makes revocation instant', async () => {
    const { a, deaf } = nodes;
    const sk = a.project.development.secretKey;
    const user = await plainUser(a, undefined, 'deaf');
    const created = json(
      await a.call({ method: 'POST', url: '/v1/api-keys', credential: sk, payload: { subject: user.id, name: 'deaf' } }),
    );
    expect((await verify(deaf, created.secret)).statusCode).toBe(200);
    expect((await a.call({ method: 'DELETE', url: `/v1/api-keys/${created.apiKey.id}`, credential: sk })).statusCode).toBe(200);
    expect((await verify(deaf, created.secret)).statusCode).toBe(200);
    expect((await verify(a, created.secret)).statusCode).toBe(401);
  });
});
