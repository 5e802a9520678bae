import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { plainUser } from '../helpers/organizations.js';
import { openSharedTestStores, testDb } from '../helpers/store.js';
import { createEndpoint, startReceiver, type Receiver } from './receiver.js';

/**
 * Two nodes over one database run their workers at the same time: every attempt is claimed by one
 * of them (FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite's single writer), so each message reaches
 * the receiver once per attempt, never twice at once.
 */
// Several nodes share one database on PostgreSQL only: SQLite serves one node.
describe.skipIf(testDb() !== 'postgres')('two nodes on PostgreSQL deliver each message once per attempt', () => {
  const clock = testClock();
  let a: TestApp;
  let b: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    const secret = 'w'.repeat(48);
    a = await startTestApp({ store: storeA!, instanceSecret: secret, now: clock.now, webhooks: { clock: clock.now, batchSize: 5 } });
    b = await startTestApp({ store: storeB!, instanceSecret: secret, now: clock.now, webhooks: { clock: clock.now, batchSize: 5 } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await b.close();
    await a.close();
  });

  const drainBoth = () => Promise.all([a.app.webhooks.drain(), b.app.webhooks.drain(), a.app.webhooks.drain(), b.app.webhooks.drain()]);

  it('sends every event exactly once, and each failed one exactly once more', async () => {
    const env = a.project.development;
    await createEndpoint(a, env.id, { url: receiver.url });
    // The first 10 answers fail, so those messages are attempted twice.
    receiver.answer(...Array.from({ length: 10 }, () => ({ status: 500, delayMs: 5 })));
    const users = 40;
    for (let i = 0; i < users; i++) await plainUser(i % 2 ? a : b, env, `node${i}`);

    await drainBoth();
    expect(receiver.received).toHaveLength(users);
    clock.advance(10_000);
    await drainBoth();

    const perMessage = new Map<string, number>();
    for (const r of receiver.received)
      perMessage.set(r.headers['webhook-id'] as string, (perMessage.get(r.headers['webhook-id'] as string) ?? 0) + 1);
    expect(perMessage.size).toBe(users);
    expect([...perMessage.values()].sort()).toEqual([...Array(users - 10).fill(1), ...Array(10).fill(2)]);

    const rows = await a.store.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'status'])
      .where('environment_id', '=', env.id)
      .execute();
    expect(rows).toHaveLength(users + 10);
    expect(rows.filter((r) => r.status === 'succeeded')).toHaveLength(users);
  });
});
