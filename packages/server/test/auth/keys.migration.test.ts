import { createCipheriv, generateKeyPairSync, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, type Store } from '../../src/db/index.js';
import { newId } from '../../src/lib/crypto.js';
import { deriveSubkey } from '../../src/lib/cursor.js';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, signUp } from '../helpers/identity.js';
import { openTestStore } from '../helpers/store.js';

/** A signing key row as the release before 0008 wrote it (no activates_at), sealed in the stored format. */
async function insertKeyOfEarlierRelease(store: Store, environmentId: string, instanceSecret: string, createdAt: number): Promise<string> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = newId('key', environmentId);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveSubkey(instanceSecret, 'signing-keys'), iv);
  cipher.setAAD(Buffer.from(`${environmentId}/${kid}`));
  const sealed = Buffer.concat([cipher.update(privateKey.export({ format: 'der', type: 'pkcs8' })), cipher.final()]);
  const privateKeySealed = ['v1', iv, cipher.getAuthTag(), sealed]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
  const jwk = JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' });
  await sql`insert into signing_keys (environment_id, id, algorithm, public_jwk, private_key, created_at)
            values (${environmentId}, ${kid}, 'ES256', ${jwk}, ${privateKeySealed}, ${createdAt})`.execute(store.db);
  return kid;
}

describe('a signing key made before staged rotation (migration 0008)', () => {
  const clock = testClock();
  let t: TestApp;
  let kid: string;

  beforeAll(async () => {
    // An instance on the previous schema signs a token, then the upgrade runs.
    const store = await openTestStore('0006_flow_tokens');
    const before = await startTestApp({ store: { ...store, close: async () => {} }, now: clock.now });
    await before.setSettings(before.project.development.id, { tokenAlgorithm: 'ES256' });
    kid = await insertKeyOfEarlierRelease(store, before.project.development.id, before.instanceSecret, clock.now() - 60_000);
    const secrets = { platformKey: before.platformKey, instanceSecret: before.instanceSecret };
    await before.app.close();
    await migrate(store, store.schema);
    t = await startTestApp({ store, now: clock.now, ...secrets });
    t.project = { ...t.project, development: before.project.development };
  });
  afterAll(() => t.close());

  it('keeps signing, and shows as active since it was made', async () => {
    const environment = t.project.development;
    expect(decodeJwt((await signUp(t, { environment })).accessToken).header.kid).toBe(kid);
    const keys = json(
      await t.call({ method: 'GET', url: `/v1/platform/environments/${environment.id}/signing-keys`, credential: t.platformKey }),
    ).data;
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kid, state: 'active', retiredAt: null });
    expect(keys[0].activatesAt).toBe(keys[0].createdAt);
  });
});
