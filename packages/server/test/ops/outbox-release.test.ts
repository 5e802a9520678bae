import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailTransport, OutgoingMessage } from '../../src/mail/transport.js';
import { RecordingTransport, startTestApp, type TestApp } from '../helpers/app.js';
import { start } from '../helpers/flows.js';
import { uniqueEmail } from '../helpers/identity.js';
import { openSharedTestStores } from '../helpers/store.js';

/** A transport whose sends hang until released: a node shut down in the middle of a delivery. */
class HangingTransport implements MailTransport {
  readonly name = 'hanging';
  readonly started: OutgoingMessage[] = [];
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));
  async send(message: OutgoingMessage): Promise<void> {
    this.started.push(message);
    await this.released;
  }
  finish(): void {
    this.release();
  }
  close(): void {}
}

/**
 * Two nodes over one database. The first stops (SIGTERM's path: the worker's stop()) while it
 * sends; what it claimed is given back, so the second sends it at once instead of after the claim
 * runs out, and the attempt the first never finished is not counted against the message.
 */
describe('a stopping node gives its email claims back', () => {
  let a: TestApp;
  let b: TestApp;
  const hanging = new HangingTransport();
  const recording = new RecordingTransport();
  beforeAll(async () => {
    const [storeA, storeB] = await openSharedTestStores(2);
    a = await startTestApp({ store: storeA!, mail: { transport: hanging } });
    b = await startTestApp({
      store: storeB!,
      platformKey: a.platformKey,
      instanceSecret: a.instanceSecret,
      mail: { transport: recording },
    });
  });
  afterAll(async () => {
    hanging.finish();
    await b.close();
    await a.close();
  });

  it('sends the message in progress and the rest of the batch from the other node', async () => {
    const production = a.project.production;
    const addresses = [uniqueEmail('first'), uniqueEmail('second')];
    for (const email of addresses) {
      const created = await a.call({ method: 'POST', url: '/v1/users', credential: production.secretKey, payload: { email } });
      expect(created.statusCode, created.body).toBe(201);
      expect((await start(a, 'email-code', { email }, production)).statusCode).toBe(202);
    }
    const run = a.app.outbox.runOnce();
    while (hanging.started.length === 0) await new Promise((r) => setTimeout(r, 10));
    await a.app.outbox.stop(50);

    await b.app.outbox.drain();
    expect(recording.sent.map((m) => m.to).sort()).toEqual([...addresses].sort());
    const rows = await b.store.db
      .selectFrom('email_outbox')
      .select(['to_address', 'status', 'attempts'])
      .where('environment_id', '=', production.id)
      .execute();
    for (const email of addresses) expect(rows.find((r) => r.to_address === email)).toMatchObject({ status: 'sent', attempts: 1 });
    hanging.finish();
    await run;
  });
});
