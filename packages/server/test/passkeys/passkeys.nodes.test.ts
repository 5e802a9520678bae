import { describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.js';
import { signUp } from '../helpers/identity.js';
import { enablePasskeys, LOCAL_ORIGIN, passkeyOptions, passkeyVerify, registerPasskey } from '../helpers/passkeys.js';
import { openSharedTestStores } from '../helpers/store.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

/** Challenges live in the database: an options call on one node and its verify on another agree. */
describe('passkeys on two app instances over one database', () => {
  it('options on one node verify on the other; the spent challenge is refused on both, and four at once sign in once', async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    const a = await startTestApp({ store: storeA! });
    const b = await startTestApp({ store: storeB!, platformKey: a.platformKey, instanceSecret: a.instanceSecret });
    try {
      const environment = a.project.development;
      await enablePasskeys(a, environment);
      const user = await signUp(a, { environment });
      // A synced passkey (counter 0): only the challenge stops a replay.
      const authenticator = new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false);
      expect((await registerPasskey(a, user.accessToken, authenticator)).statusCode).toBe(201);

      const { attemptId, options } = await passkeyOptions(a, authenticator, environment);
      const response = authenticator.get(options);
      expect((await passkeyVerify(b, environment, attemptId, response)).statusCode).toBe(200);
      expect((await passkeyVerify(a, environment, attemptId, response)).statusCode).toBe(401);
      expect((await passkeyVerify(b, environment, attemptId, response)).statusCode).toBe(401);

      const race = await passkeyOptions(b, authenticator, environment);
      const raced = authenticator.get(race.options);
      const answers = await Promise.all([a, b, a, b].map((node) => passkeyVerify(node, environment, race.attemptId, raced)));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
