import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '../../../backend/src/webhooks.js';
import { claimDueAttempts } from '../../src/webhooks/queries.js';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/worker.js';
import { startTestApp, testClock, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { outbox, start, tokenFrom } from '../helpers/flows.js';
import { uniqueEmail } from '../helpers/identity.js';
import { addMember, createOrg, plainUser } from '../helpers/organizations.js';
import { within } from '../helpers/wait.js';
import { createEndpoint, platformCall, startReceiver, type Receiver } from './receiver.js';

const clock = testClock();
const resolved: string[] = [];

describe('webhook delivery to a real HTTP receiver', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({
      now: clock.now,
      webhooks: {
        clock: clock.now,
        timeoutMs: 500,
        // Names resolve through the test: rebind.example.com is a public-looking name pointed at loopback.
        resolve: async (host) => {
          resolved.push(host);
          if (host === 'rebind.example.com' || host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
          throw new Error(`unknown host ${host}`);
        },
      },
    });
  });
  afterAll(() => t.close());
  afterEach(async () => {
    await receiver?.close();
  });

  async function setup(options: Record<string, unknown> = {}) {
    receiver = await startReceiver();
    const env = (await t.createProject('Hooks')).development;
    const endpoint = await createEndpoint(t, env.id, { url: receiver.url, ...options });
    return { env, endpoint };
  }

  async function deliveries(env: TestEnvironment, endpointId: string) {
    const res = await platformCall(t, 'GET', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpointId}/deliveries?limit=100`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as {
      id: string;
      messageId: string;
      attempt: number;
      status: string;
      responseStatus: number | null;
      error: string | null;
      nextAttemptAt: number | null;
      eventType: string;
    }[];
  }

  it('delivers every event type, each verifiable with the standardwebhooks library and verifyWebhook', async () => {
    const { env, endpoint } = await setup();
    const owner = await plainUser(t, env, 'owner');
    const other = await plainUser(t, env, 'other');
    const org = await createOrg(t, owner.id, { environment: env });
    await t.call({ method: 'PATCH', url: `/v1/organizations/${org.id}`, credential: env.secretKey, payload: { name: 'Renamed' } });
    await addMember(t, org.id, other.id, 'member', env);
    await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${other.id}`,
      credential: env.secretKey,
      payload: { role: 'admin' },
    });
    await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}/members/${other.id}`, credential: env.secretKey });
    const invite = (email: string) =>
      t.call({
        method: 'POST',
        url: `/v1/organizations/${org.id}/invitations`,
        credential: env.secretKey,
        payload: { email, role: 'member' },
      });
    const revoked = (await invite(uniqueEmail('revoked'))).json();
    await t.call({ method: 'POST', url: `/v1/organizations/${org.id}/invitations/${revoked.id}/revoke`, credential: env.secretKey });
    const invitee = uniqueEmail('invitee');
    await invite(invitee);
    const accepted = await start(t, 'invitations/accept', { token: tokenFrom((await outbox(t, invitee, env))[0]!) }, env);
    expect(accepted.statusCode, accepted.body).toBe(200);
    const signup = await t.call({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: env.publishableKey,
      payload: { email: uniqueEmail('s'), password: 'correct horse battery staple' },
    });
    expect(signup.statusCode, signup.body).toBe(201);
    await t.call({
      method: 'POST',
      url: '/v1/auth/signout',
      credential: env.publishableKey,
      payload: { refreshToken: signup.json().session.refreshToken },
    });
    await t.call({ method: 'PATCH', url: `/v1/users/${other.id}`, credential: env.secretKey, payload: { lastName: 'X' } });
    await t.call({ method: 'DELETE', url: `/v1/organizations/${org.id}`, credential: env.secretKey });
    await t.call({ method: 'DELETE', url: `/v1/users/${other.id}`, credential: env.secretKey });

    await t.app.webhooks.drain();

    const verifier = new Webhook(endpoint.secret);
    const types = receiver.received.map((r) => {
      const headers = {
        'webhook-id': r.headers['webhook-id'] as string,
        'webhook-timestamp': r.headers['webhook-timestamp'] as string,
        'webhook-signature': r.headers['webhook-signature'] as string,
      };
      const verified = verifier.verify(r.body, headers) as { type: string; timestamp: string; data: unknown };
      expect(verifyWebhook(r.body, r.headers, endpoint.secret)).toEqual(verified);
      expect(headers['webhook-id']).toMatch(/^msg_/);
      expect(r.headers['content-type']).toBe('application/json');
      return verified.type;
    });
    expect(new Set(types)).toEqual(
      new Set([
        'user.created',
        'user.updated',
        'user.deleted',
        'session.created',
        'session.revoked',
        'organization.created',
        'organization.updated',
        'organization.deleted',
        'organizationMembership.created',
        'organizationMembership.updated',
        'organizationMembership.deleted',
        'organizationInvitation.created',
        'organizationInvitation.accepted',
        'organizationInvitation.revoked',
      ]),
    );
    // A tampered body does not verify.
    const first = receiver.received[0]!;
    expect(() => verifyWebhook(first.body.replace('"type"', '"typ\\u0065"'), first.headers, endpoint.secret)).toThrow();
    const log = await deliveries(env, endpoint.id);
    expect(log.every((d) => d.status === 'succeeded' && d.responseStatus === 200 && d.attempt === 1)).toBe(true);
    expect(log).toHaveLength(receiver.received.length);
  });

  it('sends only the subscribed event types', async () => {
    const { env } = await setup({ eventTypes: ['organization.created'] });
    const owner = await plainUser(t, env, 'sub');
    await createOrg(t, owner.id, { environment: env });
    await t.app.webhooks.drain();
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(['organization.created']);
  });

  it('a receiver answering 500 then 200 gets the same webhook-id twice, the retry after 5 s ± 20 %', async () => {
    const { env, endpoint } = await setup();
    receiver.answer({ status: 500 });
    await plainUser(t, env, 'retry');
    const failedAt = clock.now();
    await t.app.webhooks.drain();
    expect(receiver.received).toHaveLength(1);

    let log = await deliveries(env, endpoint.id);
    expect(log.map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([
      [2, 'pending', null],
      [1, 'failed', 500],
    ]);
    const retryAt = log[0]!.nextAttemptAt!;
    expect(retryAt - failedAt).toBeGreaterThanOrEqual(4_000);
    expect(retryAt - failedAt).toBeLessThanOrEqual(6_000);
    expect(log[1]!.nextAttemptAt).toBe(retryAt);

    // Not due yet: nothing is sent.
    await t.app.webhooks.drain();
    expect(receiver.received).toHaveLength(1);
    clock.set(retryAt);
    await t.app.webhooks.drain();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    log = await deliveries(env, endpoint.id);
    expect(log[0]).toMatchObject({
      attempt: 2,
      status: 'succeeded',
      responseStatus: 200,
      messageId: receiver.received[0]!.headers['webhook-id'],
    });
    const read = await platformCall(t, 'GET', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}`);
    expect(read.json().health).toEqual({ recentAttempts: 2, recentFailures: 1, failureRate: 0.5 });
  });

  it('honours Retry-After', async () => {
    const { env, endpoint } = await setup();
    receiver.answer({ status: 503, headers: { 'retry-after': '600' } });
    await plainUser(t, env, 'later');
    const failedAt = clock.now();
    await t.app.webhooks.drain();
    const [next] = await deliveries(env, endpoint.id);
    expect(next).toMatchObject({ attempt: 2, status: 'pending' });
    expect(next!.nextAttemptAt! - failedAt).toBeGreaterThanOrEqual(600_000);
  });

  it('gives up after the last step of the schedule (10 attempts) and marks the message failed', async () => {
    const { env, endpoint } = await setup();
    receiver.answer(...Array.from({ length: 12 }, () => ({ status: 500 })));
    await plainUser(t, env, 'doomed');
    for (let i = 0; i < 12; i++) {
      await t.app.webhooks.drain();
      clock.advance(RETRY_SCHEDULE_MS.at(-1)! * 1.25);
    }
    expect(receiver.received).toHaveLength(10);
    const log = await deliveries(env, endpoint.id);
    expect(log).toHaveLength(10);
    expect(log[0]).toMatchObject({ attempt: 10, status: 'failed', responseStatus: 500, nextAttemptAt: null });
  });

  it('a 410 Gone disables the endpoint, and nothing more is sent to it', async () => {
    const { env, endpoint } = await setup();
    receiver.answer({ status: 410 });
    await plainUser(t, env, 'gone');
    await t.app.webhooks.drain();
    const read = await platformCall(t, 'GET', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}`);
    expect(read.json()).toMatchObject({ enabled: false, disabledReason: expect.stringContaining('410') });
    const log = await deliveries(env, endpoint.id);
    expect(log).toEqual([expect.objectContaining({ attempt: 1, status: 'failed', responseStatus: 410, nextAttemptAt: null })]);

    await plainUser(t, env, 'after');
    clock.advance(60_000);
    await t.app.webhooks.drain();
    expect(receiver.received).toHaveLength(1);

    // A manual retry needs the endpoint enabled again.
    const refused = await platformCall(
      t,
      'POST',
      `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries/${log[0]!.id}/retry`,
    );
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('conflict');
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const { env, endpoint } = await setup();
    receiver.answer({ status: 307, headers: { location: `http://127.0.0.1:${receiver.port}/elsewhere` } });
    await plainUser(t, env, 'redirect');
    await t.app.webhooks.drain();
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    expect((await deliveries(env, endpoint.id))[1]).toMatchObject({ status: 'failed', responseStatus: 307 });
  });

  it('a slow receiver times out and the message is retried', async () => {
    const { env, endpoint } = await setup();
    receiver.answer({ status: 200, delayMs: 2_000 });
    await plainUser(t, env, 'slow');
    await t.app.webhooks.drain();
    const log = await deliveries(env, endpoint.id);
    expect(log[1]).toMatchObject({
      attempt: 1,
      status: 'failed',
      responseStatus: null,
      error: expect.stringContaining('No response within'),
    });
    clock.set(log[0]!.nextAttemptAt!);
    await t.app.webhooks.drain();
    expect(receiver.received).toHaveLength(2);
    expect((await deliveries(env, endpoint.id))[0]).toMatchObject({ attempt: 2, status: 'succeeded' });
  });

  it('after a secret rotation, signs with both secrets for 24 hours, then with the new one only', async () => {
    const { env, endpoint } = await setup();
    const rotated = await platformCall(t, 'POST', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/rotate-secret`);
    const newSecret = rotated.json().secret as string;
    await plainUser(t, env, 'rotated');
    await t.app.webhooks.drain();
    const during = receiver.received[0]!;
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(verifyWebhook(during.body, during.headers, newSecret).type).toBe('user.created');
    expect(verifyWebhook(during.body, during.headers, endpoint.secret).type).toBe('user.created');
    new Webhook(newSecret).verify(during.body, during.headers as Record<string, string>);
    new Webhook(endpoint.secret).verify(during.body, during.headers as Record<string, string>);

    clock.advance(24 * 3_600_000 + 1);
    await plainUser(t, env, 'after-grace');
    await t.app.webhooks.drain();
    const after = receiver.received[1]!;
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(verifyWebhook(after.body, after.headers, newSecret).type).toBe('user.created');
    expect(() => verifyWebhook(after.body, after.headers, endpoint.secret)).toThrow();
  });

  it('a manual retry sends the message again now, with the same webhook-id', async () => {
    const { env, endpoint } = await setup();
    await plainUser(t, env, 'manual');
    await t.app.webhooks.drain();
    const [delivered] = await deliveries(env, endpoint.id);
    const retry = await platformCall(
      t,
      'POST',
      `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries/${delivered!.id}/retry`,
    );
    expect(retry.statusCode, retry.body).toBe(202);
    expect(retry.json()).toMatchObject({ attempt: 2, status: 'pending', messageId: delivered!.messageId });
    await t.app.webhooks.drain();
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([delivered!.messageId, delivered!.messageId]);
    const unknown = await platformCall(
      t,
      'POST',
      `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries/whd_nope/retry`,
    );
    expect(unknown.statusCode).toBe(404);
  });

  it('pages the delivery log with nextCursor', async () => {
    const { env, endpoint } = await setup();
    for (let i = 0; i < 3; i++) await plainUser(t, env, `page${i}`);
    await t.app.webhooks.drain();
    const base = `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries`;
    const first = (await platformCall(t, 'GET', `${base}?limit=2`)).json();
    expect(first.data).toHaveLength(2);
    const second = (await platformCall(t, 'GET', `${base}?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)).json();
    expect(second).toMatchObject({ nextCursor: null });
    expect(second.data).toHaveLength(1);
    expect(new Set([...first.data, ...second.data].map((d: { id: string }) => d.id)).size).toBe(3);
  });

  it('forgets attempts and delivered events after 30 days, keeping newer ones', async () => {
    const { env, endpoint } = await setup();
    await plainUser(t, env, 'old');
    await t.app.webhooks.drain();
    const [old] = await deliveries(env, endpoint.id);
    clock.advance(30 * 86_400_000 + 60_000);
    await plainUser(t, env, 'new');
    await t.app.webhooks.drain();
    const log = await deliveries(env, endpoint.id);
    expect(log.map((d) => d.messageId)).not.toContain(old!.messageId);
    expect(log).toHaveLength(1);
    const events = await t.store.db.selectFrom('webhook_events').select('id').where('environment_id', '=', env.id).execute();
    expect(events.map((e) => e.id)).toEqual([log[0]!.messageId]);
  });

  it('an attempt claimed by a node that died is sent once its lease runs out, never lost', async () => {
    const { env, endpoint } = await setup();
    await plainUser(t, env, 'orphan');
    // Fan out, with the receiver unreachable for the moment: claim the attempt as a node that then dies.
    const worker = t.app.webhooks;
    await (worker as unknown as { fanOut(): Promise<number> }).fanOut();
    const claimed = await claimDueAttempts(t.store.db, { now: clock.now(), leaseMs: 60_000, batchSize: 100, dialect: t.store.dialect });
    expect(claimed.filter((c) => c.endpoint_id === endpoint.id)).toHaveLength(1);

    await worker.drain();
    expect(receiver.received).toHaveLength(0);
    clock.advance(60_001);
    await worker.drain();
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(env, endpoint.id))[0]).toMatchObject({ attempt: 1, status: 'succeeded' });
  });
});

describe('webhook delivery with the worker running', () => {
  it('sends an event soon after its commit, without being driven', async () => {
    const receiver = await startReceiver();
    const t = await startTestApp({ webhooks: { startWorker: true } });
    try {
      await createEndpoint(t, t.project.development.id, { url: receiver.url });
      await plainUser(t, t.project.development, 'auto');
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(['user.created']);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('a burst of changes in two environments: the subscribed events are delivered, the others leave the outbox', async () => {
    const receiver = await startReceiver();
    const t = await startTestApp({ webhooks: { startWorker: true } });
    try {
      const hooked = (await t.createProject('Hooked')).development;
      const quiet = (await t.createProject('Quiet')).development;
      await createEndpoint(t, hooked.id, { url: receiver.url });
      // Changes committed close together are fanned out by one run (wakes within 50 ms are shared).
      const made = await Promise.all(Array.from({ length: 24 }, (_, i) => plainUser(t, i % 2 === 0 ? hooked : quiet, `burst${i}`)));
      const hookedIds = made.filter((_, i) => i % 2 === 0).map((u) => u.id);
      const waiting = (environmentId: string) =>
        t.store.db
          .selectFrom('webhook_events')
          .select('id')
          .where('environment_id', '=', environmentId as never)
          .where('fanned_out', '=', 0)
          .execute();
      for (let i = 0; i < 200 && (receiver.received.length < hookedIds.length || (await waiting(quiet.id)).length > 0); i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      const delivered = receiver.received.map((r) => JSON.parse(r.body).data.id as string);
      expect(delivered.sort()).toEqual([...hookedIds].sort());
      expect(await waiting(hooked.id)).toEqual([]);
      const left = await t.store.db
        .selectFrom('webhook_events')
        .select('id')
        .where('environment_id', '=', quiet.id as never)
        .execute();
      expect(left).toEqual([]);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('a stream of changes that wake the worker never holds a due retry back', async () => {
    const receiver = await startReceiver();
    const retryClock = testClock();
    const t = await startTestApp({ webhooks: { startWorker: true, clock: retryClock.now, pollMs: 100 } });
    let streaming = true;
    try {
      const hooked = (await t.createProject('Retried')).development;
      const quiet = (await t.createProject('Busy')).development;
      await createEndpoint(t, hooked.id, { url: receiver.url });
      // An endpoint that wants none of the stream's events: the environment is not quiet, so each change wakes the worker.
      await createEndpoint(t, quiet.id, { url: receiver.url, eventTypes: ['organization.deleted'] });
      const wake = vi.spyOn(t.app.webhooks, 'wake');
      receiver.answer({ status: 500 });
      await plainUser(t, hooked, 'retried');
      await within(10_000, async () => receiver.received.length > 0);
      expect(receiver.received).toHaveLength(1);
      // Another environment changes a user every 20 ms or so, each change a wake that comes before
      // the next poll would; the retry falls due in the middle of that stream.
      const busy = await plainUser(t, quiet, 'busy');
      const stream = (async () => {
        for (let i = 0; streaming && i < 2000; i++) {
          const changed = await t.call({
            method: 'PATCH',
            url: `/v1/users/${busy.id}`,
            credential: quiet.secretKey,
            payload: { firstName: `Busy${i}` },
          });
          expect(changed.statusCode, changed.body).toBe(200);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      // The retry falls due once the stream is under way (ten wakes, however slow the machine), and
      // the stream goes on until it is sent.
      await within(20_000, async () => wake.mock.calls.length >= 10);
      retryClock.advance(RETRY_SCHEDULE_MS[0] * 1.3);
      await within(10_000, async () => receiver.received.length >= 2);
      streaming = false;
      await stream;
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    } finally {
      streaming = false;
      await t.close();
      await receiver.close();
    }
  });

  it('a manual retry is sent at once by the running worker, not at its next poll', async () => {
    const receiver = await startReceiver();
    // Polls a minute apart: only the retry's own request to deliver can explain a prompt send.
    const t = await startTestApp({ webhooks: { startWorker: true, pollMs: 60_000 } });
    try {
      const env = (await t.createProject('Manual')).development;
      const endpoint = await createEndpoint(t, env.id, { url: receiver.url });
      await plainUser(t, env, 'manual');
      await t.app.webhooks.drain();
      expect(receiver.received).toHaveLength(1);
      const list = await platformCall(t, 'GET', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries`);
      const [delivered] = list.json().data as { id: string; messageId: string }[];
      const retry = await platformCall(
        t,
        'POST',
        `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries/${delivered!.id}/retry`,
      );
      expect(retry.statusCode, retry.body).toBe(202);
      // Within 10 s, where the next poll is a minute away.
      await within(10_000, async () => receiver.received.length >= 2);
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([delivered!.messageId, delivered!.messageId]);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
