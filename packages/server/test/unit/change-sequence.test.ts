import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { Change } from '../../src/db/changes.js';
import { changeSequenceKey, RedisLink } from '../../src/lib/redis.js';
import { deletePrefix, REDIS_SUITE, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { within } from '../helpers/wait.js';

const silentLog = { warn: () => undefined, info: () => undefined };

describe.skipIf(!REDIS_URL)(`changes numbered per environment ${REDIS_SUITE}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function node(prefix: string): Promise<{ link: RedisLink; heard: Change[] }> {
    const link = new RedisLink({ url: REDIS_URL!, prefix, log: silentLog });
    const heard: Change[] = [];
    link.on('change', (message: string) => heard.push(JSON.parse(message) as Change));
    cleanup.push(() => link.close());
    expect(await link.connect()).toBe('ok');
    return { link, heard };
  }

  function prefixed(): string {
    const prefix = testPrefix();
    cleanup.push(async () => {
      const redis = new Redis(REDIS_URL!);
      await deletePrefix(redis, prefix);
      await redis.quit();
    });
    return prefix;
  }

  const revoked = (environmentId: string): Change => ({ kind: 'session', environmentId, sessionId: 'sess_1' });

  it('a node is caught up with a number only once it has applied the change of that number', async () => {
    const prefix = prefixed();
    const a = await node(prefix);
    const b = await node(prefix);
    await a.link.publishChange(revoked('env_1'));
    // What a request on B reads right after A's response: the number is already 1.
    const seq = await b.link.readSequence('env_1');
    expect(seq).toBe(1);
    await within(1000, async () => b.heard.length === 1);
    expect(b.heard).toEqual([{ ...revoked('env_1'), seq: 1 }]);
    expect(await b.link.caughtUp('env_1', seq)).toBe(true);
    // An announcement still in flight: the number moved on, B has not heard it.
    const redis = new Redis(REDIS_URL!);
    cleanup.push(async () => void (await redis.quit()));
    await redis.incr(changeSequenceKey(prefix, 'env_1'));
    expect(await b.link.caughtUp('env_1', await b.link.readSequence('env_1'))).toBe(false);
    // Numbers are per environment: another one is untouched, and one with no change is caught up.
    expect(await b.link.readSequence('env_2')).toBe(0);
    expect(await b.link.caughtUp('env_2', 0)).toBe(true);
    expect(await b.link.caughtUp('env_1', undefined)).toBe(false);
  });

  it('a node is not fooled by a change number that Redis lost (a flush or an eviction) and counts again from 0', async () => {
    const prefix = prefixed();
    const a = await node(prefix);
    const b = await node(prefix);
    for (let i = 0; i < 3; i++) await a.link.publishChange(revoked('env_1'));
    await within(1000, async () => b.heard.length === 3);
    expect(await b.link.caughtUp('env_1', await b.link.readSequence('env_1'))).toBe(true);
    // Redis loses the number; the next change is numbered 1 again, and B has not heard it yet.
    const redis = new Redis(REDIS_URL!);
    cleanup.push(async () => void (await redis.quit()));
    await redis.del(changeSequenceKey(prefix, 'env_1'));
    await redis.incr(changeSequenceKey(prefix, 'env_1'));
    expect(await b.link.caughtUp('env_1', await b.link.readSequence('env_1'))).toBe(false);
    // Once it hears changes on the new count, it is caught up by them again.
    await a.link.publishChange(revoked('env_1'));
    await within(1000, async () => b.heard.length === 4);
    expect(await b.link.caughtUp('env_1', await b.link.readSequence('env_1'))).toBe(true);
  });

  it('a node that heard nothing of an environment since it subscribed asks for its number, and waits to hear it', async () => {
    const prefix = prefixed();
    const a = await node(prefix);
    for (let i = 0; i < 3; i++) await a.link.publishChange(revoked('env_1'));
    const late = await node(prefix);
    const seq = await late.link.readSequence('env_1');
    expect(seq).toBe(3);
    // Two requests at once wait for one sync.
    expect(await Promise.all([late.link.caughtUp('env_1', seq), late.link.caughtUp('env_1', seq)])).toEqual([true, true]);
    // The sync announces no change: nobody's caches hear it.
    expect(late.heard).toEqual([]);
    expect(a.heard).toHaveLength(3);
  });

  it('announcing a change increments the number and tags the message in one step', async () => {
    const prefix = prefixed();
    const a = await node(prefix);
    await a.link.publishChange(revoked('env_1'));
    await a.link.publishChange({ kind: 'user', environmentId: 'env_1', userId: 'user_1' });
    const redis = new Redis(REDIS_URL!);
    cleanup.push(async () => void (await redis.quit()));
    expect(await redis.get(changeSequenceKey(prefix, 'env_1'))).toBe('2');
    expect(changeSequenceKey(prefix, 'env_1')).toBe(`${prefix}changes:{env_1}`);
  });
});
