import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeFeed, type Change } from '../../src/db/changes.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/identity.js';
import { REDIS_SUITE, REDIS_URL, testPrefix } from '../helpers/redis.js';

/**
 * A response waits until the changes its request made are announced to the other nodes (commit →
 * announced → answered), and for nothing else: one request's slow announcement (a slow Redis) must
 * not hold up an unrelated request on the same node.
 */
describe.skipIf(!REDIS_URL)(`each request waits only for its own announcements ${REDIS_SUITE}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ redis: { url: REDIS_URL!, prefix: testPrefix() } });
  });
  afterAll(() => t?.close());

  it("a slow announcement of one request does not delay another, and still delays its own answer", async () => {
    const slow = await signUp(t);
    const other = await signUp(t);
    // Beside the Redis relay: one more relay, which holds the slow user's announcements until released.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heard!: () => void;
    const announced = new Promise<void>((resolve) => (heard = resolve));
    const unrelay = changeFeed(t.store.db).relay((change: Change) => {
      if (change.kind !== 'user' || change.userId !== slow.userId) return undefined;
      heard();
      return held;
    });
    try {
      const patch = (userId: string, firstName: string) =>
        t.call({ method: 'PATCH', url: `/v1/users/${userId}`, credential: t.project.development.secretKey, payload: { firstName } });

      let slowAnswered = false;
      const slowAnswer = patch(slow.userId, 'Slow').then((response) => {
        slowAnswered = true;
        return response;
      });
      await announced;

      // Before the fix this waited for the held announcement, and the test timed out.
      const otherAnswer = await patch(other.userId, 'Other');
      expect(otherAnswer.statusCode).toBe(200);
      expect(slowAnswered).toBe(false);

      release();
      expect((await slowAnswer).statusCode).toBe(200);
    } finally {
      release();
      unrelay();
    }
  });
});
