import { afterEach, describe, expect, it } from 'vitest';
import { RedisLink } from '../../src/lib/redis.js';
import { QuietingProxy } from '../helpers/quieting-proxy.js';
import { REDIS_SUITE, REDIS_URL, testPrefix } from '../helpers/redis.js';
import { within } from '../helpers/wait.js';

const silentLog = { warn: () => undefined, info: () => undefined };

describe.skipIf(!REDIS_URL)(`Redis link heartbeat ${REDIS_SUITE}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function link(url: string, heartbeatMs: number): Promise<{ link: RedisLink; hearing: boolean[] }> {
    const created = new RedisLink({ url, prefix: testPrefix(), log: silentLog, heartbeatMs });
    const hearing: boolean[] = [];
    created.on('hearing', (value: boolean) => hearing.push(value));
    cleanup.push(() => created.close());
    expect(await created.connect()).toBe('ok');
    return { link: created, hearing };
  }

  it('hears its own heartbeat before connect() resolves', async () => {
    const { link: redis, hearing } = await link(REDIS_URL!, 100);
    expect(redis.hearing).toBe(true);
    expect(hearing).toEqual([true]);
  });

  it('does not take a stalled event loop for a deaf subscriber', async () => {
    const { link: redis, hearing } = await link(REDIS_URL!, 50);
    await new Promise((resolve) => setTimeout(resolve, 120));
    const until = Date.now() + 600; // twelve heartbeat periods with nothing read from any socket
    while (Date.now() < until) {
      // busy: the timer, the publish replies and the echoes all wait
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hearing).toEqual([true]);
    expect(redis.hearing).toBe(true);
    expect(redis.state).toBe('ok');
  });

  it('turns deaf when heartbeats stop coming back, and hears again on a new subscription', async () => {
    const proxy = await QuietingProxy.start(REDIS_URL!);
    cleanup.push(() => proxy.close());
    const { link: redis, hearing } = await link(proxy.url, 50);
    expect(proxy.quietSubscribers()).toBe(1);
    await within(2000, async () => hearing.includes(false));
    await within(2000, async () => redis.hearing);
    expect(hearing).toEqual([true, false, true]);
    expect(redis.state).toBe('ok');
  });
});
